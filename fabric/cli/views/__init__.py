"""What the commands print that is more than a line, and the documentation pages generated from the code."""
