#!/usr/bin/env bash
# Draws a route (a GeoJSON LineString Feature, as `gpu-route path --format geojson` writes it) over
# the road network around it, into a PNG, with gnuplot (Debian: gnuplot-nox) and psql.
# Usage:
#   scripts/plot_route.sh [options] ROUTE.geojson OUTPUT.png [-- psql connection arguments]
# Options:
#   --edges-table NAME      edges (id, source, target, ...) [ny_edges]
#   --vertices-table NAME   vertex coordinates (id, lon, lat) [ny_vertices]
#   --margin FRACTION       road network shown around the route, as a share of its extent [0.3]
#   --width PIXELS          width of the picture [1400]
#   --title TEXT            title [the route's from, to and cost]
# The database comes from the PG* environment variables, or the psql arguments after "--":
#   gpu-route path --from 187538 --to 213176 --format geojson > route.geojson
#   scripts/plot_route.sh route.geojson ny_route.png -- -d ny
# Where ImageMagick's convert is installed, the PNG is reduced to a 32-colour palette (it looks
# the same, at about a fifth of the size).
set -euo pipefail
edges_table=ny_edges
vertices_table=ny_vertices
margin=0.3
width=1400
title=
usage() { awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; }
fail() { echo "plot_route.sh: $*" >&2; exit 2; }
positional=()
while [ $# -gt 0 ]; do
  case "$1" in
    --edges-table) edges_table=${2:?--edges-table needs a name}; shift 2 ;;
    --vertices-table) vertices_table=${2:?--vertices-table needs a name}; shift 2 ;;
    --margin) margin=${2:?--margin needs a fraction}; shift 2 ;;
    --width) width=${2:?--width needs pixels}; shift 2 ;;
    --title) title=${2:?--title needs a text}; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    --) shift; break ;;
    -*) fail "unknown option $1 (see --help)" ;;
    *) positional+=("$1"); shift ;;
  esac
done
[ ${#positional[@]} -eq 2 ] || { usage >&2; exit 2; }
route=${positional[0]}
output=${positional[1]}
[ -r "$route" ] || fail "cannot read $route"
command -v gnuplot >/dev/null || fail "gnuplot is not installed (Debian: apt-get install gnuplot-nox)"
[[ $margin =~ ^[0-9]*\.?[0-9]+$ ]] || fail "--margin wants a fraction such as 0.3"
[[ $width =~ ^[0-9]+$ ]] || fail "--width wants pixels"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The LineString's coordinates, one "lon lat" per line.
geojson=$(tr -d ' \n\r\t' <"$route")
sed -n 's/.*"coordinates":\[\[\([-0-9.eE+,]*\(\],\[[-0-9.eE+,]*\)*\)\]\].*/\1/p' <<<"$geojson" |
  sed 's/\],\[/\n/g' | tr ',' ' ' >"$work/route.dat"
[ -s "$work/route.dat" ] || fail "$route has no LineString coordinates"
property() { sed -n "s/.*\"properties\":{.*\"$1\":\([-0-9.eE+]*\).*/\1/p" <<<"$geojson"; }
from=$(property from)
to=$(property to)
cost=$(property cost)
edge_count=$(property edge_count)
if [ -z "$title" ]; then
  title="Shortest path from vertex ${from:-?} to vertex ${to:-?}: cost ${cost:-?}, ${edge_count:-?} edges"
fi

# The window: the route's extent plus the margin, at least about 1 km across, with the aspect
# of the ground (a degree of longitude is cos(latitude) of a degree of latitude).
read -r xmin xmax ymin ymax ratio < <(awk -v margin="$margin" '
  NR == 1 { xmin = xmax = $1; ymin = ymax = $2 }
  { if ($1 < xmin) xmin = $1; if ($1 > xmax) xmax = $1; if ($2 < ymin) ymin = $2; if ($2 > ymax) ymax = $2 }
  END {
    pi = atan2(0, -1); k = cos((ymin + ymax) / 2 * pi / 180)
    dx = (xmax - xmin) * k; dy = ymax - ymin
    size = (dx > dy ? dx : dy); if (size < 0.01) size = 0.01
    pad = size * margin
    w = dx + 2 * pad; h = dy + 2 * pad
    # Not thinner than 1:2 either way, so the picture stays readable.
    if (w < h / 2) w = h / 2; if (h < w / 2) h = w / 2
    cx = (xmin + xmax) / 2; cy = (ymin + ymax) / 2
    printf "%.6f %.6f %.6f %.6f %.6f\n", cx - w / 2 / k, cx + w / 2 / k, cy - h / 2, cy + h / 2, h / w
  }' "$work/route.dat")

# The road segments inside the window (each two-way road once).
psql -X -q -At -v ON_ERROR_STOP=1 -v edges="$edges_table" -v vertices="$vertices_table" \
  -v xmin="$xmin" -v xmax="$xmax" -v ymin="$ymin" -v ymax="$ymax" "$@" >"$work/roads.dat" <<'SQL' ||
COPY (
  SELECT a.lon, a.lat, b.lon - a.lon, b.lat - a.lat
  FROM (SELECT DISTINCT least(source, target) AS u, greatest(source, target) AS v FROM :"edges") e
  JOIN :"vertices" a ON a.id = e.u
  JOIN :"vertices" b ON b.id = e.v
  WHERE (a.lon BETWEEN :'xmin'::float8 AND :'xmax'::float8 AND a.lat BETWEEN :'ymin'::float8 AND :'ymax'::float8)
     OR (b.lon BETWEEN :'xmin'::float8 AND :'xmax'::float8 AND b.lat BETWEEN :'ymin'::float8 AND :'ymax'::float8)
) TO STDOUT WITH (DELIMITER ' ');
SQL
  fail "cannot read the road network from the database"
[ -s "$work/roads.dat" ] || fail "no road of $edges_table lies around the route"
head -n 1 "$work/route.dat" >"$work/start.dat"
tail -n 1 "$work/route.dat" >"$work/end.dat"

height=$(awk -v w="$width" -v r="$ratio" 'BEGIN { printf "%d", w * r + 90 }')
title=${title//\"/\'}
gnuplot <<GNUPLOT || fail "gnuplot failed"
set terminal pngcairo size $width,$height font "DejaVu Sans,12" background "#ffffff"
set output "$output"
set title "$title" font ",15"
set size ratio $ratio
set xrange [$xmin:$xmax]
set yrange [$ymin:$ymax]
set xlabel "longitude"
set ylabel "latitude"
set format x "%.2f"
set format y "%.2f"
set tics out nomirror
set border 3 lc rgb "#888888"
set key top left box opaque samplen 2 spacing 1.3
plot "$work/roads.dat" using 1:2:3:4 with vectors nohead lc rgb "#9a9a9a" lw 0.6 title "road network", \
     "$work/route.dat" using 1:2 with lines lc rgb "#d7301f" lw 4 title "route", \
     "$work/start.dat" using 1:2 with points pt 7 ps 2.2 lc rgb "#1a9850" title "start (vertex ${from:-?})", \
     "$work/end.dat" using 1:2 with points pt 5 ps 2.0 lc rgb "#2c7bb6" title "end (vertex ${to:-?})"
GNUPLOT
if command -v convert >/dev/null 2>&1 && convert "$output" -colors 32 "PNG8:$work/palette.png" 2>/dev/null; then
  cp "$work/palette.png" "$output"
fi
echo "plot_route.sh: $output ($(wc -l <"$work/route.dat") route points, $(wc -l <"$work/roads.dat") road segments)"
