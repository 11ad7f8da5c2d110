"""Stage 5, intent: per Ethernet switch (ethernet.py) and per InfiniBand subnet (infiniband/) everything a
configuration says, vendor-neutral, every policy value included; then the intent checks (checks.py:
platform capabilities, settings without effect, the subnet checks) on the Context grown by the intents.

In: Design, Topology, Plan. Out: frozen intents and findings. No syntax of any platform here.
"""
