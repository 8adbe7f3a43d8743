#!/bin/sh
# Install the one-folder StreamScope app for the current user (or under PREFIX):
#   ./install.sh            -> ~/.local/lib/streamscope, ~/.local/bin/streamscope,
#                              the desktop entry and icons under ~/.local/share
#   PREFIX=/opt/x ./install.sh
# Uninstall: ./install.sh --uninstall (same PREFIX).
set -eu
PREFIX="${PREFIX:-$HOME/.local}"
HERE="$(cd "$(dirname "$0")" && pwd)"
LIB="$PREFIX/lib/streamscope"
ICONS="$PREFIX/share/icons/hicolor"

if [ "${1:-}" = "--uninstall" ]; then
    rm -rf "$LIB" "$PREFIX/bin/streamscope" "$PREFIX/share/applications/streamscope.desktop"
    find "$ICONS" -name 'streamscope.*' -path '*/apps/*' -exec rm -f {} + 2>/dev/null || true
    echo "StreamScope removed from $PREFIX"
    exit 0
fi

mkdir -p "$PREFIX/bin" "$PREFIX/share/applications" "$ICONS"
rm -rf "$LIB"
mkdir -p "$LIB"
# The app itself (its folder less the desktop files, which go where desktops look).
for entry in "$HERE"/* ; do
    case "$(basename "$entry")" in share|install.sh) ;; *) cp -R "$entry" "$LIB/" ;; esac
done
ln -sf "$LIB/streamscope" "$PREFIX/bin/streamscope"
cp "$HERE/share/applications/streamscope.desktop" "$PREFIX/share/applications/"
cp -R "$HERE/share/icons/hicolor/." "$ICONS/"
command -v update-desktop-database >/dev/null 2>&1 \
    && update-desktop-database "$PREFIX/share/applications" >/dev/null 2>&1 || true
echo "StreamScope installed: $PREFIX/bin/streamscope (menu entry: StreamScope)"
case ":$PATH:" in *":$PREFIX/bin:"*) ;; *) echo "Add $PREFIX/bin to your PATH to run it by name." ;; esac
