"""What the query formats share: the statement markers ``tools/collect`` writes before each statement
(``-- kansoku query=ID repetition=N``, printed by psql's ``\\echo``) and psql's error lines."""

from __future__ import annotations

import re

# A line that begins as a marker but is not one is a damaged marker: an error, never a statement renamed.
MARKER_START = "-- kansoku"
MARKER = re.compile(r"^-- kansoku query=(?P<query>\S+) repetition=(?P<rep>\d+)\s*$", re.ASCII)
PSQL_ERROR = re.compile(r"^(?:psql:(?P<file>[^:]*):(?P<line>\d+): )?(?P<level>ERROR|FATAL|PANIC):\s+(?P<msg>.*)$", re.ASCII)
