"""`aoi view`: a local, read-only web viewer of runs and trajectories; the report's static trajectory pages."""
