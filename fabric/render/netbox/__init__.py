"""NetBox: bulk-import CSVs and device-type YAML."""
