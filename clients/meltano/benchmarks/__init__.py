"""The plugin's benchmark (issue #22): Meltano's state cycle through the plugin beside Meltano's
local filesystem backend and the ClickHouse backend's settle lock, and `meltano run` wall time
with Statehouse beside the local filesystem. ``benchmarks/run.sh <jar>`` runs it."""
