// UsherEngine
