print("usher")
