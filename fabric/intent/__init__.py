"""Stage 5, intent: per Ethernet switch (ethernet.py) and per InfiniBand subnet (infiniband/) everything a
configuration says, vendor-neutral and ready to print.

In: Design, Topology, Plan. Out: frozen intents and findings. No syntax of any platform here.
"""
