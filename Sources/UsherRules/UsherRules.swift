// UsherRules
