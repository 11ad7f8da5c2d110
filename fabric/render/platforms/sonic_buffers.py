"""SONiC buffer tables per HwSKU, in the buffer model the ASIC really runs.

SONiC's dynamic buffer model (headroom computed by per-vendor Lua plugins) is implemented for NVIDIA Spectrum only;
"for vendors not supporting dynamic buffer mode: traditional mode will always be applied" (SONiC HLD
doc/qos/dynamically-headroom-calculation.md). So:

- Broadcom SKUs get `buffer_model: traditional` and the static tables `config qos reload` would write: the pools and
  profiles of the SKU's `buffers_defaults_t0.j2`/`_t1.j2` (a leaf is a ToRRouter, a spine a LeafRouter; the two
  files differ only in default_cable, which CABLE_LENGTH replaces), and for every PFC port a lossless priority
  group whose profile `pg_lossless_<speed>_<cable>_profile` is the row of the SKU's `pg_profile_lookup.ini` for
  the port's speed and cable length, with the fields buffermgrd writes for it in the traditional model (sonic-swss
  cfgmgr/buffermgr.cpp: pool, xon, xon_offset, xoff, size, dynamic_th). buffermgrd only matches lengths the file
  lists, so the planned length is rounded up to the next listed one (more headroom, never less) and CABLE_LENGTH
  says that length.
- Spectrum SKUs keep the dynamic model and get the tables it needs (DEFAULT_LOSSLESS_BUFFER_PARAMETER,
  LOSSLESS_TRAFFIC_PATTERN from sonic-buildimage files/build_templates/buffers_config.j2; the pools and profiles of
  the SKU's buffers_defaults_objects.j2 in dynamic mode, each used port's ingress/egress profile lists), a lossless
  PG with profile NULL (headroom computed by buffermgrd) and an egress_lossless_profile queue on the lossless
  priority of every PFC port, lossy queues 0-6 with q_lossy_profile. The templates make priorities 3 and 4 lossless
  (PFC on both in the SKU's qos.json.j2); fabric's RoCE profile has one lossless priority, so only it is.
  tests/unit/render/test_sonic_buffers.py renders each SKU's vendored buffers_dynamic.json.j2 and compares.

Values: sonic-net/sonic-buildimage at 086b03bd70f9e211aaaf5f6aefe0790b508d2a94 (2026-08-23), Apache-2.0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

SOURCE_COMMIT = "086b03bd70f9e211aaaf5f6aefe0790b508d2a94"


@dataclass(frozen=True)
class BufferSku:
    model: str  # "traditional" | "dynamic"
    source: str  # the sonic-buildimage directory the values come from
    derived: str  # "" when the SKU's own files; else how they were derived
    pools: dict[str, dict[str, str]]
    profiles: dict[str, dict[str, str]]
    # pg_profile_lookup.ini: (speed Mb/s, cable m) -> (size, xon, xoff, threshold, xon_offset)
    pg_lookup: dict[tuple[int, int], tuple[str, str, str, str, str]]
    # the profile of a lossy queue and the queues buffered (0 .. queues-1, upstream's 0-2, 3-4, 5-6):
    # buffers_config.j2's default (egress_lossy_profile) or the SKU's generate_queue_buffers (q_lossy_profile)
    lossy_queue_profile: str = "egress_lossy_profile"
    queues: int = 7
    # BUFFER_PORT_INGRESS_PROFILE_LIST / BUFFER_PORT_EGRESS_PROFILE_LIST of every buffered port (the SKU's
    # generate_profile_lists); empty: the SKU writes none
    port_profile_lists: tuple[str, str] = ("", "")


def _ini(text: str) -> dict[tuple[int, int], tuple[str, str, str, str, str]]:
    rows: dict[tuple[int, int], tuple[str, str, str, str, str]] = {}
    for line in text.splitlines():
        fields = line.split()
        if fields and not fields[0].startswith("#"):
            speed, cable, size, xon, xoff, threshold, xon_offset = fields
            rows[int(speed), int(cable.removesuffix("m"))] = (size, xon, xoff, threshold, xon_offset)
    return rows


# Tomahawk 5, 64 x 800G: device/dell/x86_64-dell_z9864f-r0/Dell-Z9864f-O64/
# (buffers_defaults_t0.j2 and _t1.j2, the same pools and profiles; pg_profile_lookup.ini)
_TH5_64X800 = BufferSku(
    model="traditional",
    source="device/dell/x86_64-dell_z9864f-r0/Dell-Z9864f-O64",
    derived="",
    pools={
        "ingress_lossless_pool": {"size": "162539680", "type": "ingress", "mode": "dynamic", "xoff": "33374584"},
        "egress_lossless_pool": {"size": "162539680", "type": "egress", "mode": "static"},
    },
    profiles={
        "ingress_lossy_profile": {"pool": "ingress_lossless_pool", "size": "0", "static_th": "165867080"},
        "egress_lossless_profile": {"pool": "egress_lossless_pool", "size": "0", "static_th": "165867080"},
        "egress_lossy_profile": {"pool": "egress_lossless_pool", "size": "1778", "dynamic_th": "0"},
        "egress_lossy_cpu_profile": {"pool": "egress_lossless_pool", "size": "9398", "dynamic_th": "-2"},
    },
    pg_lookup=_ini(
        """
  10000  5m   18796     0    91440      0        3556
  25000  5m   18796     0    91440      0        3556
  40000  5m   18796     0   106934      0        3556
  50000  5m   18796     0   106934      0        3556
 100000  5m   18796     0   147066      0        3556
 200000  5m   18796     0   229362      0        3556
 400000  5m   18796     0   393192      0        3556
 800000  5m   18796     0   729488      0        3556
  10000  40m  18796     0    94742      0        3556
  25000  40m  18796     0    94742      0        3556
  40000  40m  18796     0   113538      0        3556
  50000  40m  18796     0   113538      0        3556
 100000  40m  18796     0   160274      0        3556
 200000  40m  18796     0   255778      0        3556
 400000  40m  18796     0   446024      0        3556
 800000  40m  18796     0   835406      0        3556
  10000  300m 18796     0   258572      0        3556
  25000  300m 18796     0   258572      0        3556
  40000  300m 18796     0   258572      0        3556
  50000  300m 18796     0   258572      0        3556
 100000  300m 18796     0   258572      0        3556
 200000  300m 18796     0   452374      0        3556
 400000  300m 18796     0   839216      0        3556
 800000  300m 18796     0  1621536      0        3556
"""
    ),
)


def _spectrum(source: str, egress_lossless_pool_size: str, ingress_lossy_pool: bool) -> BufferSku:
    """A Spectrum SKU in the dynamic model: buffers_defaults_objects.j2 with `dynamic_mode` set (sizes computed by
    buffermgrd, but the egress lossless pool's), egress_lossless_pool_size from the SKU's buffers_defaults_t1.j2
    (the same in its _t0.j2; the two differ only in pool sizes the dynamic model computes).

    Two variants of buffers_defaults_objects.j2 exist upstream: ACS-MSN2700's has an ingress lossy pool (the
    lossy PG's profile on it, both ingress profiles in the port's ingress list); Mellanox-SN2700-D48C8's, which
    the SN4600C and SN5600 SKUs link to, has none (the lossy PG's profile on the ingress lossless pool). Both buffer
    queues 0-6 (lossy ones with q_lossy_profile) and give every port the ingress and egress profile lists."""
    lossy_pool = "ingress_lossy_pool" if ingress_lossy_pool else "ingress_lossless_pool"
    pools = {"ingress_lossless_pool": {"type": "ingress", "mode": "dynamic"}}
    if ingress_lossy_pool:
        pools["ingress_lossy_pool"] = {"type": "ingress", "mode": "dynamic"}
    return BufferSku(
        model="dynamic",
        source=source,
        derived="",
        pools={
            **pools,
            "egress_lossless_pool": {"size": egress_lossless_pool_size, "type": "egress", "mode": "dynamic"},
            "egress_lossy_pool": {"type": "egress", "mode": "dynamic"},
        },
        profiles={
            "ingress_lossless_profile": {"pool": "ingress_lossless_pool", "size": "0", "dynamic_th": "7"},
            "ingress_lossy_profile": {"pool": lossy_pool, "size": "0", "dynamic_th": "3"},
            "egress_lossless_profile": {"pool": "egress_lossless_pool", "size": "0", "dynamic_th": "7"},
            "egress_lossy_profile": {"pool": "egress_lossy_pool", "size": "9216", "dynamic_th": "7"},
            "q_lossy_profile": {"pool": "egress_lossy_pool", "size": "0", "dynamic_th": "3"},
        },
        pg_lookup={},
        lossy_queue_profile="q_lossy_profile",
        queues=7,
        port_profile_lists=(
            "ingress_lossless_profile,ingress_lossy_profile" if ingress_lossy_pool else "ingress_lossless_profile",
            "egress_lossless_profile,egress_lossy_profile",
        ),
    )


SKUS: dict[str, BufferSku] = {
    # Edgecore AS9817-64O, Tomahawk 5 64 x 800G OSFP. Its own buffer files (edge-core/sonic-buildimage,
    # device/accton/x86_64-accton_as9817_64o-r0/Accton-AS9817-64O) are not in upstream sonic-buildimage, so the
    # values are those of upstream's other Tomahawk 5 64 x 800G OSFP SKU, Dell Z9864F-O64 (same ASIC, same port
    # count and speeds, same 5/40/300 m lookup): unverified for the Edgecore box.
    "Accton-AS9817-64O": BufferSku(
        **{
            **_TH5_64X800.__dict__,
            "derived": "Dell-Z9864f-O64 (same ASIC, Tomahawk 5, and ports, 64 x 800G OSFP); unverified",
        }
    ),
    "Dell-Z9864f-O64": _TH5_64X800,
    # The Spectrum SKUs' own directories upstream (tests/data/sonic_buffers: rendered and compared); some files are
    # links to Spectrum-1 SN2700 SKUs' (same macros, per-SKU sizes in buffers_defaults_t1.j2):
    # SN5600-V256 and SN4600C-C64: buffers_defaults_objects.j2 -> Mellanox-SN2700-D48C8's (no ingress lossy pool)
    "Mellanox-SN5600-V256": _spectrum(
        "device/mellanox/x86_64-nvidia_sn5600-r0/Mellanox-SN5600-V256", "158229504", ingress_lossy_pool=False
    ),
    "Mellanox-SN4600C-C64": _spectrum(
        "device/mellanox/x86_64-mlnx_msn4600c-r0/Mellanox-SN4600C-C64", "60817392", ingress_lossy_pool=False
    ),
    # ACS-SN2201: buffers_defaults_objects.j2 and buffers_defaults_t1.j2 -> ACS-MSN2700's (ingress lossy pool)
    "ACS-SN2201": _spectrum("device/mellanox/x86_64-nvidia_sn2201-r0/ACS-SN2201", "13945824", ingress_lossy_pool=True),
}

# A model without a HwSKU or with one this table does not know: the dynamic model as before (the pools' sizes
# computed), to be replaced by the SKU's entry above; the egress lossless pool's size left to the image.
GENERIC = BufferSku(
    **{
        **_spectrum("(none: no HwSKU data)", "", ingress_lossy_pool=True).__dict__,
        "pools": {
            name: {k: v for k, v in row.items() if k != "size"}
            for name, row in _spectrum("", "", ingress_lossy_pool=True).pools.items()
        },
        "derived": "no buffer data for the HwSKU",
    }
)

# files/build_templates/buffers_config.j2, `dynamic_mode` branch
DYNAMIC_TABLES: dict[str, Any] = {
    "DEFAULT_LOSSLESS_BUFFER_PARAMETER": {"AZURE": {"default_dynamic_th": "0"}},
    "LOSSLESS_TRAFFIC_PATTERN": {"AZURE": {"mtu": "1024", "small_packet_percentage": "50"}},
}


def sku(hwsku: str | None) -> BufferSku | None:
    return SKUS.get(hwsku) if hwsku else None


def cable_bucket(sku: BufferSku, speed_mbps: int, cable_m: float) -> int | None:
    """The shortest length pg_profile_lookup.ini lists for the speed that is at least `cable_m`; None if none."""
    lengths = sorted(length for speed, length in sku.pg_lookup if speed == speed_mbps)
    return next((length for length in lengths if length >= cable_m), None)


def lossless_profile(sku: BufferSku, speed_mbps: int, cable: int) -> tuple[str, dict[str, str]]:
    """The profile buffermgrd (traditional model) makes for a lossless PG: name and fields."""
    size, xon, xoff, threshold, xon_offset = sku.pg_lookup[speed_mbps, cable]
    row = {"pool": "ingress_lossless_pool", "xon": xon, "xoff": xoff, "size": size, "dynamic_th": threshold}
    if xon_offset:
        row["xon_offset"] = xon_offset
    return f"pg_lossless_{speed_mbps}_{cable}m_profile", row


def ranges(values: list[int]) -> list[str]:
    """[0, 1, 2, 4, 5, 6, 7] -> ["0-2", "4-7"]: the index ranges SONiC keys BUFFER_PG/BUFFER_QUEUE by."""
    out: list[str] = []
    start = previous = None
    for value in sorted(values):
        if previous is not None and value == previous + 1:
            previous = value
            continue
        if start is not None:
            out.append(f"{start}-{previous}" if previous != start else str(start))
        start = previous = value
    if start is not None:
        out.append(f"{start}-{previous}" if previous != start else str(start))
    return out


def _indices(key: str) -> set[int]:
    low, _, high = key.partition("-")
    return set(range(int(low), int(high or low) + 1))


CHECKED = ("DEVICE_METADATA", "PORT_QOS_MAP", "BUFFER_PROFILE", "BUFFER_PG", "BUFFER_QUEUE")  # what it reads


def buffer_problems(db: dict[str, Any]) -> list[str]:
    """What breaks losslessness in a config_db: every PFC priority of every port needs a lossless BUFFER_PG (a
    profile on the ingress lossless pool with xoff headroom, or NULL, the dynamic model's computed headroom) and a
    BUFFER_QUEUE entry; every profile a PG or queue names must exist."""
    problems: list[str] = []
    model = db.get("DEVICE_METADATA", {}).get("localhost", {}).get("buffer_model")
    profiles = db.get("BUFFER_PROFILE", {})
    pg: dict[str, dict[int, str]] = {}
    for key, row in db.get("BUFFER_PG", {}).items():
        port, _, index = key.partition("|")
        for i in _indices(index):
            pg.setdefault(port, {})[i] = row.get("profile", "")
    queue: dict[str, set[int]] = {}
    for key, row in db.get("BUFFER_QUEUE", {}).items():
        port, _, index = key.partition("|")
        queue.setdefault(port, set()).update(_indices(index))
        if row.get("profile") not in profiles:
            problems.append(f"BUFFER_QUEUE {key}: profile {row.get('profile')} is not in BUFFER_PROFILE")
    for port, row in sorted(db.get("PORT_QOS_MAP", {}).items()):
        for priority in (int(p) for p in row.get("pfc_enable", "").split(",") if p):
            name = pg.get(port, {}).get(priority)
            if name is None:
                problems.append(f"{port}: PFC on priority {priority} without a lossless BUFFER_PG")
            elif name == "NULL":
                if model != "dynamic":
                    problems.append(f"{port}|{priority}: profile NULL outside the dynamic buffer model")
            elif name not in profiles:
                problems.append(f"{port}|{priority}: profile {name} is not in BUFFER_PROFILE")
            elif profiles[name].get("pool") != "ingress_lossless_pool" or not profiles[name].get("xoff"):
                problems.append(f"{port}|{priority}: profile {name} is not lossless (no xoff headroom)")
            if priority not in queue.get(port, set()):
                problems.append(f"{port}: PFC on priority {priority} without a BUFFER_QUEUE entry")
    return problems
