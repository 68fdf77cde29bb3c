"""Every folder of tests runs: pytest collects only `testpaths`, so an app whose tests
folder is not under one of them would pass CI with none of its tests run."""

import tomllib

from conftest import ROOT


def test_every_tests_folder_is_under_a_testpath():
    testpaths = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"][
        "ini_options"
    ]["testpaths"]
    folders = [
        path.relative_to(ROOT)
        for path in [*ROOT.glob("*/tests"), *ROOT.glob("clients/*/tests")]
        if any(path.glob("test_*.py"))
    ]
    uncollected = [
        str(folder)
        for folder in folders
        if not any(folder.is_relative_to(testpath) for testpath in testpaths)
    ]
    assert uncollected == []
