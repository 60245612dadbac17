"""README's "From Testcontainers" snippets are the tests that run: each code block of that section is,
word for word, the part of its language's test between the ``readme: <language>`` and ``readme: end``
markers (dedented). The tests themselves run in test_python.py, test_java.py, test_go.py, test_node.py."""
import re
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
SNIPPETS = {  # README's block language -> (test file, marker)
    "python": (HERE / "test_python.py", "python"),
    "java": (HERE / "java/src/test/java/kraftwire/ReassignmentTest.java", "java"),
    "go": (HERE / "go/reassign_test.go", "go"),
    "javascript": (HERE / "node/reassign.test.js", "node"),
}


def section() -> str:
    readme = (REPO / "README.md").read_text()
    start = readme.index("### From Testcontainers\n")
    return readme[start:readme.index("\n## ", start)]


def region_of(path: Path, marker: str) -> str:
    found = re.search(rf"^[ \t]*(?:#|//) readme: {marker}\n(.*?)^[ \t]*(?:#|//) readme: end\n", path.read_text(),
                      re.S | re.M)
    assert found, f"{path} has no readme: {marker} ... readme: end region"
    return textwrap.dedent(found.group(1)).strip("\n")


@pytest.mark.parametrize("language", SNIPPETS)
def test_the_readme_shows_the_tested_snippet(language):
    path, marker = SNIPPETS[language]
    blocks = re.findall(rf"^```{language}\n(.*?)^```", section(), re.S | re.M)
    assert len(blocks) == 1, f"README's Testcontainers section should show one {language} block"
    assert blocks[0].strip("\n") == region_of(path, marker)


def test_the_container_section_says_how_to_build_with_a_registry():
    readme = (REPO / "README.md").read_text()
    container = readme[readme.index("## In a container\n"):readme.index("### From Testcontainers\n")]
    assert "docker build -f docker/Dockerfile --target kraftwire -t kraftwire ." in container
    assert "not run" not in container and "never been built" not in readme
