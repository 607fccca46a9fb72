"""PNG plots for the benchmarks through gnuplot (Debian's gnuplot-nox)."""

import os
import subprocess
import sys


def gnuplot(png, rows, script):
    """Writes `rows` (lists of values, the first row the column names) to a
    data file next to `png`, then runs `script` with {data} and {png}
    substituted. A missing gnuplot is reported, not fatal: the JSON and the
    table are the results, the plot is a view of them."""
    data = png + ".dat"
    with open(data, "w") as f:
        for r in rows:
            f.write(" ".join(str(v) for v in r) + "\n")
    try:
        subprocess.run(["gnuplot"], input=script.format(data=data, png=png), text=True,
                       check=True)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"no plot ({e}); scripts/install-deps.sh gnuplot-nox installs gnuplot",
              file=sys.stderr)
    finally:
        os.remove(data)
