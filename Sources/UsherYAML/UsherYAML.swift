// UsherYAML
