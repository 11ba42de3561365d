#!/usr/bin/env python3
"""Derives the facts drydock's CRD compatibility tests need from upstream CRD files.

Usage: crd-facts.py DIR > facts.json

DIR holds upstream `<group>_<plural>.yaml` CRDs. The output keeps, per CRD, its name, group,
scope, names and, per version, served/storage/deprecated, subresources, printer columns
(name, type, JSON path, priority, format) and the schema's structure: types, formats,
enums, required fields, defaults, bounds, patterns and list/map types. Descriptions and
other prose are left out.
"""

import json
import pathlib
import sys

import yaml

SCHEMA_KEYS = {
    "type", "format", "enum", "required", "default", "nullable",
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
    "minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties",
    "pattern", "x-kubernetes-int-or-string", "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-list-type", "x-kubernetes-list-map-keys", "x-kubernetes-map-type",
    "x-kubernetes-embedded-resource",
}
COLUMN_KEYS = ("name", "type", "jsonPath", "priority", "format")
NAME_KEYS = ("kind", "listKind", "plural", "singular", "shortNames", "categories")


def schema(node):
    out = {k: v for k, v in node.items() if k in SCHEMA_KEYS}
    if "properties" in node:
        out["properties"] = {name: schema(child) for name, child in sorted(node["properties"].items())}
    for key in ("items", "additionalProperties"):
        child = node.get(key)
        if isinstance(child, dict):
            out[key] = schema(child)
        elif child is not None:
            out[key] = child
    return out


def version(v):
    out = {k: v[k] for k in ("name", "served", "storage", "deprecated") if k in v}
    if "subresources" in v:
        out["subresources"] = v["subresources"]
    columns = v.get("additionalPrinterColumns")
    if columns:
        out["additionalPrinterColumns"] = [{k: c[k] for k in COLUMN_KEYS if k in c} for c in columns]
    root = v.get("schema", {}).get("openAPIV3Schema")
    if root is not None:
        out["schema"] = {"openAPIV3Schema": schema(root)}
    return out


def crd(doc):
    spec = doc["spec"]
    return {
        "metadata": {"name": doc["metadata"]["name"]},
        "spec": {
            "group": spec["group"],
            "scope": spec["scope"],
            "names": {k: spec["names"][k] for k in NAME_KEYS if k in spec["names"]},
            "versions": [version(v) for v in spec["versions"]],
        },
    }


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    crds = [crd(yaml.safe_load(p.read_text())) for p in sorted(pathlib.Path(sys.argv[1]).glob("*.yaml"))]
    crds.sort(key=lambda c: c["metadata"]["name"])
    json.dump(crds, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
