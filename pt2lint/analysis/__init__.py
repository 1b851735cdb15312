"""Static analysis of compiled regions: imports, regions, value kinds, rule events."""
