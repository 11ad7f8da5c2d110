"""hosts/<node>/…: the node side of routing on the host (`dual_homing: host_routing`) and of bonds to MLAG
leaf pairs (`dual_homing: bond`)."""
