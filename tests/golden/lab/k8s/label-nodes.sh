#!/bin/sh
# Topology labels of the scheduler nodes of design lab; written by fabric. Run: sh label-nodes.sh
set -eu
kubectl label node --overwrite srv1 fabric.topograph.run/tier-0=leaf1 fabric.topograph.run/tier-1=spines fabric.topology/node-group=srv
kubectl label node --overwrite srv2 fabric.topograph.run/tier-0=leaf1 fabric.topograph.run/tier-1=spines fabric.topology/node-group=srv
kubectl label node --overwrite srv3 fabric.topograph.run/tier-0=leaf2 fabric.topograph.run/tier-1=spines fabric.topology/node-group=srv
kubectl label node --overwrite srv4 fabric.topograph.run/tier-0=leaf2 fabric.topograph.run/tier-1=spines fabric.topology/node-group=srv
kubectl label node --overwrite srv5 fabric.topograph.run/tier-0=leaf3 fabric.topograph.run/tier-1=spines fabric.topology/node-group=srv
kubectl label node --overwrite srv6 fabric.topograph.run/tier-0=leaf3 fabric.topograph.run/tier-1=spines fabric.topology/node-group=srv
kubectl label node --overwrite srv7 fabric.topograph.run/tier-0=leaf4 fabric.topograph.run/tier-1=spines fabric.topology/node-group=srv
kubectl label node --overwrite srv8 fabric.topograph.run/tier-0=leaf4 fabric.topograph.run/tier-1=spines fabric.topology/node-group=srv
