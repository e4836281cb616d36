# SPDX-License-Identifier: Apache-2.0
# Hand-run benchmarks (bench/README.md): `make bench` runs them against this
# build and keeps their output and the plot in bench-results/. Never part of
# `make check` or ./scripts/test; needs the packages of scripts/deps.sh's
# TOPODNS_BENCH_PKGS too (gnuplot-nox for the plot), installed here when
# missing. BENCHES picks which run (default all of them, in this order).
BENCHES = callgrind qps scale relist sync
EXTRA_DIST += bench/README.md bench/lib.sh bench/callgrind bench/qps bench/scale \
	bench/relist bench/sync bench/churn bench/memory bench/applyrate.c \
	bench/bigsvc bench/tcpq.c bench/alloccost.c

bench: src/topodns tests/kubesim/kubesim
	@. $(abs_top_srcdir)/scripts/deps.sh && install_bench_deps
	@$(MKDIR_P) bench-results
	@for b in $(BENCHES); do \
	    echo "== bench/$$b ($$(date -u '+%Y-%m-%d %H:%M UTC'), $$(nproc) cores, load $$(cut -d' ' -f1-3 /proc/loadavg))"; \
	    OUT=$(abs_top_builddir)/bench-results BUILD=$(abs_top_builddir) \
	        $(abs_top_srcdir)/bench/$$b 2>&1 | tee bench-results/$$b.txt; \
	done

.PHONY: bench
