// UsherText
