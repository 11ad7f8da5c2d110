"""The spec's primitives: names and templates, guarded numbers and booleans, ratios, networks, secret references,
and `StrictModel`, the base of every spec model."""

# No `from __future__ import annotations` in the model modules: pydantic would compile each annotation string
# at import; written ones are evaluated once, by Python.
import contextlib
import math
import re
import string
from fractions import Fraction
from ipaddress import IPv4Network, IPv6Network, ip_address, ip_interface, ip_network
from typing import Annotated, Any, Self

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)

from fabric.model.kinds import ROLES, SWITCH_LAYERS

FABRIC_ROLES = ROLES
LAYERS = SWITCH_LAYERS

# Names become file names, hostnames and config words: letters, digits, '.', '_', '-', at most 64, and `\Z`
# (not `$`, which accepts a final newline).
NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\Z")
NAME_RULE = "must start with a letter or digit and hold only letters, digits, '.', '_' and '-'"
MAX_NAME = 64
PORT_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/:-]{0,63}\Z")
ENV_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}\Z")
HOST_LABEL = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\Z")


def is_name(value: str) -> bool:
    return bool(NAME_RE.match(value)) and ".." not in value and len(value) <= MAX_NAME


def no_entries() -> list[Any]:
    """An empty list: the default of a list field. (Not `list` itself: pydantic reads every default factory's
    signature, and list's is parsed from its text at each import; see docs/dev/performance.md.)"""
    return []


class StrictModel(BaseModel):
    # defer_build: a model nested in the spec (or in a catalog file) is validated by its root's validator, which
    # holds its schema; only a root builds a validator of its own (Spec at import, CatalogFile when the catalog is
    # first read), and a nested model when something validates it alone, as a validator and serializer per model
    # would be built at every import. A section's default is made by model_construct, not by validating {} (which
    # would build the section's own validator): the same value, as those sections have no model validators and
    # pydantic validates no default (tests/unit/pipeline/test_startup.py checks both).
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False, defer_build=True)


def _not_bool(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError("must be a number, not true or false")
    return value


def _only_bool(value: Any) -> Any:
    if not isinstance(value, bool):
        raise ValueError("must be true or false")
    return value


# YAML `true` is not the number 1, and `1` or `"yes"` is not true.
Int = Annotated[int, BeforeValidator(_not_bool)]
Float = Annotated[float, BeforeValidator(_not_bool)]
Bool = Annotated[bool, BeforeValidator(_only_bool)]


def check_name(value: str) -> str:
    if not NAME_RE.match(value):
        raise ValueError(NAME_RULE)
    if ".." in value:
        raise ValueError("must not hold '..'")
    if len(value) > MAX_NAME:
        raise ValueError(f"is longer than {MAX_NAME} characters")
    return value


def check_port(value: str) -> str:
    if not PORT_RE.match(value) or ".." in value:
        raise ValueError("is not a port name (letters, digits, '.', '_', '/', ':' and '-', at most 64)")
    return value


def check_host(value: str) -> str:
    """An IP address or an RFC 1123 hostname (a service a switch is pointed at)."""
    with contextlib.suppress(ValueError):
        ip_address(value)
        return value
    labels = value.split(".")
    if len(value) > 253 or not all(HOST_LABEL.match(label) for label in labels) or labels[-1].isdigit():
        raise ValueError("is neither an IP address nor a hostname (RFC 1123: letters, digits, '-' and '.')")
    return value


def check_template(template: str, allowed: tuple[str, ...], *, kind: str = "name") -> str:
    """A name template is a Python format string whose fields are among `allowed`; what it expands to is a
    valid name (`kind` name, port or part number), so no template can reach outside its directory or line."""
    try:
        fields = [(f, spec) for _, f, spec, _ in string.Formatter().parse(template) if f is not None]
    except ValueError as exc:
        raise ValueError(f"is not a valid name template ({exc})") from None
    for name, spec in fields:
        base = name.split(".")[0].split("[")[0]
        if base not in allowed or base != name:
            raise ValueError(f"uses {{{name}}}; a template may use {', '.join('{' + a + '}' for a in allowed)}")
        if spec and not re.fullmatch(r"0?[0-9]{1,2}d?", spec):
            raise ValueError(f"formats {{{name}}} with `{spec}`; only a zero-padded width such as `:03d` is allowed")
    probe = {a: 1 for a in allowed}
    try:
        expanded = template.format(**probe)
    except (ValueError, KeyError, IndexError) as exc:
        raise ValueError(f"is not a valid name template ({exc})") from None
    pattern = {"name": NAME_RE, "port": PORT_RE, "part": PART_RE}[kind]
    if not pattern.match(expanded) or ".." in expanded or len(expanded) > MAX_NAME:
        raise ValueError(f"expands to `{expanded}`" if _printable(expanded) else "expands to an invalid name")
    return template


PART_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/+-]{0,63}\Z")


def _printable(value: str) -> bool:
    return value.isprintable() and len(value) <= 64


MAX_RATIO = 100


def parse_ratio(value: Any) -> Any:
    """'4:3' → 1.333…, 2 → 2.0. Down-to-up bandwidth; 1.0 is non-blocking."""
    if isinstance(value, bool):
        raise ValueError("must be a ratio like '1:1' or '4:3', or a number")
    if isinstance(value, int | float):
        if not math.isfinite(value):
            raise ValueError("must be a finite number")
        if not value > 0:
            raise ValueError("must be positive")
        if value > MAX_RATIO or value < 1 / MAX_RATIO:
            raise ValueError(f"must be between 1:{MAX_RATIO} and {MAX_RATIO}:1")
        return float(value)
    if isinstance(value, str):
        match = re.fullmatch(r"\s*([0-9]{1,6}(?:\.[0-9]{1,6})?)\s*:\s*([0-9]{1,6}(?:\.[0-9]{1,6})?)\s*", value)
        if match:
            down, up = Fraction(match.group(1)), Fraction(match.group(2))
            if down <= 0 or up <= 0:
                raise ValueError("both sides of a ratio must be positive")
            if not 1 / MAX_RATIO <= down / up <= MAX_RATIO:
                raise ValueError(f"must be between 1:{MAX_RATIO} and {MAX_RATIO}:1")
            return float(down / up)
    raise ValueError(f"{value!r} is not a ratio like '1:1' or '4:3'")


# Editors see what a user may write (the JSON Schema's input types), the models hold what it means.
RatioText = Annotated[str, Field(pattern=r"^\s*\d+(\.\d+)?\s*:\s*\d+(\.\d+)?\s*$")]
Ratio = Annotated[float, BeforeValidator(parse_ratio, json_schema_input_type=RatioText | float)]


def _network(version: int) -> Any:
    def parse(value: Any) -> Any:
        if isinstance(value, IPv4Network | IPv6Network):
            return value
        if not isinstance(value, str):
            raise ValueError(f"must be an IPv{version} prefix such as {'10.0.0.0/16' if version == 4 else 'fd00::/48'}")
        try:
            network = ip_network(value, strict=False)
        except ValueError:
            raise ValueError(f"{value!r} is not an IPv{version} prefix") from None
        if network.version != version:
            raise ValueError(f"{value} is not an IPv{version} prefix")
        if ip_interface(value).ip != network.network_address:
            raise ValueError(f"{value} has host bits set; did you mean {network}?")
        return network

    return parse


Network4 = Annotated[IPv4Network, BeforeValidator(_network(4))]
Network6 = Annotated[IPv6Network, BeforeValidator(_network(6))]


def format_ratio(value: float) -> str:
    """1.0 → '1:1', 1.333… → '4:3', 1.0156 → '1.02:1'."""
    frac = Fraction(value).limit_denominator(16)
    if abs(float(frac) - value) < 1e-9:
        return f"{frac.numerator}:{frac.denominator}"
    return f"{value:.2f}:1"


class SecretRef(StrictModel):
    """A secret is never written in the spec: it names an environment variable or a file."""

    env: str | None = Field(default=None, description="Environment variable holding the secret.")
    file: str | None = Field(default=None, description="File holding the secret (relative to the spec).")

    @field_validator("env")
    @classmethod
    def _env(cls, value: str | None) -> str | None:
        if value is not None and not ENV_RE.match(value):
            raise ValueError("is not an environment variable name (letters, digits and '_')")
        return value

    @model_validator(mode="after")
    def _one(self) -> Self:
        if (self.env is None) == (self.file is None):
            raise ValueError("give exactly one of `env` or `file`")
        return self


def check_groups(value: list[str]) -> list[str]:
    """Node group names, each at most once."""
    for group in value:
        check_name(group)
    if len(set(value)) != len(value):
        raise ValueError("lists a node group twice")
    return value
