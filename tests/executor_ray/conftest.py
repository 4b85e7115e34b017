"""Fixtures for the Ray executor's tests: a real two-node cluster on 127.0.0.1.

Ray must only ever listen on loopback here: every test module that starts a cluster runs in
the loopback-only namespace (``python -m caliper.testing.offline -- pytest ...``) and skips
outside it (CI's ``CALIPER_REQUIRE_E2E=1`` turns the skip into a failure for e2e tests).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

import pytest
from ray_cluster import RayCluster
from ray_lab import SCRIPT, Lab

from caliper.testing.harness import find_agent_cli
from caliper.testing.mcp_echo import HttpEchoServer
from caliper.testing.model_server import ModelServer
from caliper.testing.offline import loopback_only


def require_loopback() -> None:
    """Skip unless this process is in a loopback-only network namespace."""
    inside, why = loopback_only()
    if not inside:
        pytest.skip(f"the Ray cluster tests need a loopback-only namespace: {why}")


@pytest.fixture(scope="session")
def ray_cluster_factory(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Callable[[Mapping[str, str], Mapping[str, str]], RayCluster]]:
    """Factory: ``start(env_a, env_b)`` → a started two-node cluster; all stopped at the end
    of the session (and this process's driver disconnected first)."""
    require_loopback()
    started: list[RayCluster] = []

    def start(env_a: Mapping[str, str], env_b: Mapping[str, str]) -> RayCluster:
        cluster = RayCluster(tmp_path_factory.mktemp("ray"))
        started.append(cluster)
        return cluster.start(env_a, env_b)

    yield start
    from caliper_executor_ray.connect import import_ray

    ray = import_ray()
    if ray.is_initialized():
        ray.shutdown()
    for cluster in started:
        cluster.stop()
    left = [pid for cluster in started for pid in cluster.processes()]
    assert left == [], f"Ray processes outlived their cluster: {left}"


@pytest.fixture(scope="session")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    """The lab with its model server and MCP server (skips without the pinned claude)."""
    root = tmp_path_factory.mktemp("ray-lab")
    cli = find_agent_cli("claude", root / "bin")
    if isinstance(cli, str):
        pytest.skip(cli)
    server = ModelServer(SCRIPT).start()
    with HttpEchoServer() as echo:
        yield Lab(root, cli, server, echo)
    server.stop()


@pytest.fixture(scope="session")
def cluster(lab: Lab, ray_cluster_factory) -> RayCluster:
    """Two nodes, each with claude and its login, the fake agent, and the secret."""
    return ray_cluster_factory(lab.node_env("a"), lab.node_env("b"))
