#!/usr/bin/env bash
# Rebuilds assets/three/three.iife.min.js, the three.js the 3D view pages embed, from the
# npm packages pinned below: three.js itself and its OrbitControls, bundled by esbuild into
# one classic script that defines the global THREE (a page opened from disk cannot import
# ES modules from files). Needs Node.js and npm; run from anywhere.
set -euo pipefail
THREE_VERSION=0.187.0
ESBUILD_VERSION=0.25.12
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
printf '{"private": true, "dependencies": {"three": "%s", "esbuild": "%s"}}\n' "$THREE_VERSION" "$ESBUILD_VERSION" > package.json
npm install --no-audit --no-fund --silent
cat > entry.js <<'JS'
export * from 'three';
export { OrbitControls } from 'three/addons/controls/OrbitControls.js';
JS
npx esbuild entry.js --bundle --format=iife --global-name=THREE --minify --legal-comments=eof --outfile="$here/three.iife.min.js"
cp node_modules/three/LICENSE "$here/LICENSE"
echo "three.js $THREE_VERSION bundled into $here/three.iife.min.js"
