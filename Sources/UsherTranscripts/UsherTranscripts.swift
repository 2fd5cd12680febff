// UsherTranscripts: transcript formats, replay, rule tests, reports.
