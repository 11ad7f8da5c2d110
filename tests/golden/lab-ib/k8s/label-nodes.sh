#!/bin/sh
# Topology labels of the scheduler nodes of design lab-ib; written by fabric. Run: sh label-nodes.sh
set -eu
kubectl label node --overwrite node01 fabric.topograph.run/tier-0=leaf1 fabric.topograph.run/tier-1=spines fabric.topology/node-group=cn
kubectl label node --overwrite node02 fabric.topograph.run/tier-0=leaf2 fabric.topograph.run/tier-1=spines fabric.topology/node-group=cn
kubectl label node --overwrite node03 fabric.topograph.run/tier-0=leaf1 fabric.topograph.run/tier-1=spines fabric.topology/node-group=cn
kubectl label node --overwrite node04 fabric.topograph.run/tier-0=leaf2 fabric.topograph.run/tier-1=spines fabric.topology/node-group=cn
kubectl label node --overwrite node05 fabric.topograph.run/tier-0=leaf1 fabric.topograph.run/tier-1=spines fabric.topology/node-group=cn
kubectl label node --overwrite node06 fabric.topograph.run/tier-0=leaf2 fabric.topograph.run/tier-1=spines fabric.topology/node-group=cn
kubectl label node --overwrite fs1 fabric.topograph.run/tier-0=leafgroup3 fabric.topograph.run/tier-1=spines fabric.topology/node-group=fs
kubectl label node --overwrite fs2 fabric.topograph.run/tier-0=leafgroup3 fabric.topograph.run/tier-1=spines fabric.topology/node-group=fs
kubectl label node --overwrite ufm001 fabric.topograph.run/tier-0=leafgroup3 fabric.topograph.run/tier-1=spines fabric.topology/node-group=ufm
kubectl label node --overwrite ufm002 fabric.topograph.run/tier-0=leafgroup3 fabric.topograph.run/tier-1=spines fabric.topology/node-group=ufm
