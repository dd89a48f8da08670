"""sketchlab's airspeed-velocity suites (see ``common`` for the size profiles and the data)."""
