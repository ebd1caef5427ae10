"""Test machinery shipped with fw, so device plugins can run fw's own suites against themselves."""
