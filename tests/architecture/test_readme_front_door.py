"""The README is a front door (issue 29): short, its Docker lines the ones the image and the
compose example are tested with, every guide it names there, and the rest in docs/."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
PASTE = re.compile(r"^  # --- the mediabot service: paste from here ---\n(.*?)^  # --- to here ---",
                   re.MULTILINE | re.DOTALL)


def test_the_readme_is_at_most_two_hundred_lines():
    assert len(README.rstrip("\n").splitlines()) <= 200


def test_the_readmes_docker_run_line_is_the_one_the_container_test_runs():
    dockerfile = (ROOT / "Dockerfile").read_text().splitlines()
    line = next(ln for ln in dockerfile if ln.startswith("#   docker run ")).removeprefix("#   ")
    assert f"\n{line}\n" in README


def test_the_readmes_compose_service_is_the_examples_which_test_compose_checks():
    service = PASTE.search((ROOT / "docker" / "compose.example.yaml").read_text()).group(1)
    assert f"```yaml\n{service}```" in README


def test_every_guide_the_readme_links_is_there():
    links = re.findall(r"\]\(([^)#]+)\)", README)
    assert len(links) >= 10
    missing = [link for link in links if not (ROOT / link).is_file()]
    assert not missing, missing


def test_the_readme_names_both_compose_clients_and_the_us_registration():
    assert "docker-compose` 1.29" in README and "`docker compose`" in README
    assert "A2P 10DLC" in README.split("## Try it first", 1)[0]


def test_each_hooks_url_has_one_answer_per_setup_and_the_proxy_passes_every_path():
    reaching = (ROOT / "docs" / "reaching-it.md").read_text()
    for url in ("http://mediabot:8080/hooks/sonarr", "http://127.0.0.1:8080/hooks/sonarr",
                "https://sms.example.com/hooks/sonarr"):
        assert reaching.count(f"`{url}`") == 1, url
    proxy = reaching.split("## TLS through a reverse proxy", 1)[1]
    assert all(path in proxy for path in ("`/sms`", "`/sms/status`", "`/hooks/*`"))
    compose = (ROOT / "docker" / "compose.example.yaml").read_text()
    assert "http://mediabot:8080/hooks/sonarr" in compose
