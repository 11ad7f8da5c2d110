"""hosts/<node>/…: the node side of routing on the host (`dual_homing: host_routing`)."""
