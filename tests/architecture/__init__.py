"""Tests of the package as a whole: its layers, and one owner module per table."""
