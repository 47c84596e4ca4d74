"""What the query formats share: the statement markers ``tools/collect`` writes before each statement
(``-- kansoku query=ID repetition=N``, printed by psql's ``\\echo``) and psql's error lines."""

from __future__ import annotations

import re

MARKER = re.compile(r"^-- kansoku query=(?P<query>\S+) repetition=(?P<rep>\d+)\s*$")
PSQL_ERROR = re.compile(r"^(?:psql:(?P<file>[^:]*):(?P<line>\d+): )?(?P<level>ERROR|FATAL|PANIC):\s+(?P<msg>.*)$")
