#!/usr/bin/python3
# Parses Prometheus text exposition from stdin with Debian's python3-prometheus-client (an independent
# parser, not the console's code) and prints, one JSON object per line, each family and every sample:
#   {"family": ..., "type": ...}
#   {"family": ..., "type": ..., "name": ..., "labels": {...}, "value": ...}
# Exit 1 (with the parser's message on stderr) when the text does not parse.
import json
import sys

from prometheus_client.parser import text_string_to_metric_families

try:
    for family in text_string_to_metric_families(sys.stdin.read()):
        print(json.dumps({"family": family.name, "type": family.type}))
        for sample in family.samples:
            print(json.dumps({"family": family.name, "type": family.type, "name": sample.name,
                              "labels": sample.labels, "value": sample.value}))
except Exception as error:  # the parser raises ValueError and friends on malformed input
    print(f"parse error: {error}", file=sys.stderr)
    sys.exit(1)
