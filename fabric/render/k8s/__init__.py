"""Kubernetes: topology node labels, a Kueue Topology with its ResourceFlavors, Volcano HyperNodes."""
