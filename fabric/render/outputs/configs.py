"""configs/<switch>/…: every Ethernet switch's files, in the syntax of its platform (and an EOS switch's
structured config)."""

from __future__ import annotations

from fabric.pipeline import Build
from fabric.render.engine.registry import Output
from fabric.render.platforms import PLATFORMS
from fabric.render.platforms.eos_structured import structured_configs, structured_shard


def configs(build: Build) -> dict[str, str]:
    return config_shard(build, 0, 1)


def config_shard(build: Build, k: int, n: int) -> dict[str, str]:
    """The files of every n-th switch from the k-th (the switches of one worker)."""
    files: dict[str, str] = {}
    for name, intent in list(build.intents.items())[k::n]:
        for file, text in PLATFORMS[intent.platform].render(intent).items():
            files[f"configs/{name}/{file}"] = text
    return files


def private_configs(build: Build) -> set[str]:
    """Files that carry secrets (written mode 0600)."""
    return {
        f"configs/{name}/{file}"
        for name, intent in build.intents.items()
        if intent.has_secrets
        for file in PLATFORMS[intent.platform].files
    }


OUTPUTS: tuple[Output, ...] = (
    Output("configs", configs, private=private_configs, shard=config_shard, weight=8.5),
    # each EOS switch's structured config beside its startup-config, the record AVD keeps
    Output("eos-structured-config", structured_configs, shard=structured_shard),
)
