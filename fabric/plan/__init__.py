"""`fabric plan`: from a GPU count to ranked candidate designs, each built through the pipeline."""
