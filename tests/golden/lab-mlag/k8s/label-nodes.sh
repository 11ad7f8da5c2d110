#!/bin/sh
# Topology labels of the scheduler nodes of design lab-mlag; written by fabric. Run: sh label-nodes.sh
set -eu
kubectl label node --overwrite srv1 fabric.topograph.run/tier-0=leafgroup1 fabric.topograph.run/tier-1=spines fabric.topology/node-group=srv
kubectl label node --overwrite srv2 fabric.topograph.run/tier-0=leafgroup1 fabric.topograph.run/tier-1=spines fabric.topology/node-group=srv
kubectl label node --overwrite srv3 fabric.topograph.run/tier-0=leafgroup2 fabric.topograph.run/tier-1=spines fabric.topology/node-group=srv
kubectl label node --overwrite srv4 fabric.topograph.run/tier-0=leafgroup2 fabric.topograph.run/tier-1=spines fabric.topology/node-group=srv
