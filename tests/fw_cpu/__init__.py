"""Tests of the fw_cpu plugin."""
