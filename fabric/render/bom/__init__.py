"""Bill of materials, power and cooling, and total cost of ownership (prices are placeholders)."""
