"""A plugin's version and requirements, read from its METADATA header lines (not through the
email package, which ``import fw_core`` would otherwise import)."""

from fw_core import plugin_discovery


class FakeDistribution:
    def __init__(self, metadata):
        self.metadata_text = metadata

    def read_text(self, name):
        return self.metadata_text if name == "METADATA" else None


def test_headers_keep_repeated_fields_fold_continuations_and_stop_at_the_body():
    dist = FakeDistribution("Metadata-Version: 2.1\nName: fw-cube\nVersion: 1.2.3\n"
                            "Requires-Dist: numpy>=1.24\nRequires-Dist: fw-core\n  >=9\n"
                            "\nRequires-Dist: not-a-header (the long description)\n")
    headers = plugin_discovery.headers(dist)
    assert headers["version"] == ["1.2.3"]
    assert headers["requires-dist"] == ["numpy>=1.24", "fw-core >=9"]
    assert plugin_discovery.incompatibility(dist) == ("needs fw-core>=9, but fw-core 0.1.0 is "
                                              "installed")


def test_a_distribution_without_metadata_has_no_requirements():
    assert plugin_discovery.headers(FakeDistribution(None)) == {}
    assert plugin_discovery.incompatibility(FakeDistribution(None)) is None
