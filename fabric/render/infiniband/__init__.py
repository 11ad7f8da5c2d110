"""InfiniBand subnet-manager files (opensm.conf per SM host, GUID files, partitions.conf, node-name-map)
and topology.net in ibnetdiscover's format (whose reader `fabric verify` uses too).

In: the subnet intents of a Build. Out: text. No file I/O.
"""
