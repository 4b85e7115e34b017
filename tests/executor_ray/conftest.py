"""Fixtures for the Ray executor's tests: a real two-node cluster on 127.0.0.1.

Ray must only ever listen on loopback here: every test module that starts a cluster runs in
the loopback-only namespace (``python -m caliper.testing.offline -- pytest ...``) and skips
outside it (CI's ``CALIPER_REQUIRE_E2E=1`` turns the skip into a failure for e2e tests).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import pytest
from ray_cluster import RayCluster

from caliper.testing.offline import loopback_only


def require_loopback() -> None:
    """Skip unless this process is in a loopback-only network namespace."""
    inside, why = loopback_only()
    if not inside:
        pytest.skip(f"the Ray cluster tests need a loopback-only namespace: {why}")


@pytest.fixture(scope="module")
def ray_cluster_factory(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Callable[[Mapping[str, str], Mapping[str, str]], RayCluster]]:
    """Factory: ``start(env_a, env_b)`` → a started two-node cluster; all stopped at the end
    of the module (and the driver disconnected first)."""
    require_loopback()
    started: list[RayCluster] = []

    def start(env_a: Mapping[str, str], env_b: Mapping[str, str]) -> RayCluster:
        cluster = RayCluster(tmp_path_factory.mktemp("ray"))
        started.append(cluster)
        return cluster.start(env_a, env_b)

    yield start
    import ray

    if ray.is_initialized():
        ray.shutdown()
    for cluster in started:
        cluster.stop()
    left = [pid for cluster in started for pid in cluster.processes()]
    assert left == [], f"Ray processes outlived their cluster: {left}"


def base_env(**extra: str) -> dict[str, str]:
    """This process's environment plus ``extra`` (what a node's workers will see)."""
    env = dict(os.environ)
    env.update(extra)
    return env


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An empty project folder."""
    folder = tmp_path / "project"
    folder.mkdir()
    return folder
