"""Pictures of a design: logical topology, rails, rack elevations and floor plan, drawn by graphviz."""
