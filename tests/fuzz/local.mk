# SPDX-License-Identifier: Apache-2.0
# tests/fuzz: the fuzz harnesses (libFuzzer entry points, one per input
# surface; the list and what each covers: docs/testing.md, "Fuzzing").
#
# In this build each harness is an ordinary program: tests/fuzz/replay.c is
# its main() and replays its seed corpus (tests/fuzz/corpus_NAME/) and every
# crash found so far (tests/fuzz/regress_NAME/) under `make check`, so they
# also run under the ASan and valgrind stages of scripts/test. fuzz_msg and
# fuzz_store have their own main() (see their top comments).
#
# scripts/fuzz (`make fuzz`) builds the same programs with clang's libFuzzer
# in build/fuzz by setting FUZZ_DEFS=-DFUZZING_LIBFUZZER (replay.c turns
# into nothing) and FUZZ_LINK=-fsanitize=fuzzer, and runs each one, with
# the dictionary tests/fuzz/NAME.dict for the text formats.
FUZZ_DEFS =
FUZZ_LINK =
FUZZ_CC_FLAGS = $(AM_CFLAGS) $(FUZZ_DEFS)
FUZZ_HARNESSES = tests/fuzz/fuzz_msg tests/fuzz/fuzz_store tests/fuzz/fuzz_corefile \
	tests/fuzz/fuzz_kube tests/fuzz/fuzz_watch tests/fuzz/fuzz_kubeconfig \
	tests/fuzz/fuzz_zone tests/fuzz/fuzz_hosts tests/fuzz/fuzz_forward \
	tests/fuzz/fuzz_tcp tests/fuzz/fuzz_http tests/fuzz/fuzz_jsonsel
check_PROGRAMS += $(FUZZ_HARNESSES)
# fuzz_store runs through its script (it needs the fixture as JSON lines)
TESTS += tests/fuzz/fuzz_msg tests/fuzz/fuzz_store.sh tests/fuzz/fuzz_corefile \
	tests/fuzz/fuzz_kube tests/fuzz/fuzz_watch tests/fuzz/fuzz_kubeconfig \
	tests/fuzz/fuzz_zone tests/fuzz/fuzz_hosts tests/fuzz/fuzz_forward \
	tests/fuzz/fuzz_tcp tests/fuzz/fuzz_http tests/fuzz/fuzz_jsonsel
EXTRA_DIST += tests/fuzz/replay.c tests/fuzz/fuzz_store.sh tests/fuzz/seeds.py \
	tests/fuzz/corpus_msg tests/fuzz/corpus_store tests/fuzz/corpus_corefile \
	tests/fuzz/corpus_kube tests/fuzz/corpus_watch tests/fuzz/corpus_kubeconfig \
	tests/fuzz/corpus_zone tests/fuzz/corpus_hosts tests/fuzz/corpus_forward \
	tests/fuzz/corpus_tcp tests/fuzz/corpus_http tests/fuzz/corpus_jsonsel \
	tests/fuzz/jsonsel_diff.h tests/fuzz/regress_watch tests/fuzz/regress_jsonsel tests/fuzz/regress_zone \
	tests/fuzz/corefile.dict tests/fuzz/kube.dict tests/fuzz/kubeconfig.dict tests/fuzz/store.dict \
	tests/fuzz/watch.dict tests/fuzz/zone.dict tests/fuzz/template.dict tests/fuzz/corpus_template \
	tests/fuzz/hosts.dict tests/fuzz/corefile_root

# the wire library: parse, encode, round trip (own main: ok-/bad- corpus names)
tests_fuzz_fuzz_msg_SOURCES = tests/fuzz/fuzz_msg.c
tests_fuzz_fuzz_msg_CFLAGS = $(FUZZ_CC_FLAGS)
tests_fuzz_fuzz_msg_LDFLAGS = $(FUZZ_LINK)
tests_fuzz_fuzz_msg_LDADD = $(LIBWIRE) $(LDNS_LIBS)

# the store writers and the topology decision (own main: a damage sweep)
tests_fuzz_fuzz_store_SOURCES = tests/fuzz/fuzz_store.c tests/fuzz/quiet.h tests/fuzz/rcu_now.h
tests_fuzz_fuzz_store_CFLAGS = $(FUZZ_CC_FLAGS)
tests_fuzz_fuzz_store_LDFLAGS = $(FUZZ_LINK)
tests_fuzz_fuzz_store_LDADD = $(TOPOLOGY_LIBS) $(DEP_LIBS)

# the Corefile lexer, parser and dispenser
tests_fuzz_fuzz_corefile_SOURCES = tests/fuzz/fuzz_corefile.c tests/fuzz/quiet.h tests/fuzz/replay.c
tests_fuzz_fuzz_corefile_CFLAGS = $(FUZZ_CC_FLAGS) -DSRCDIR='"$(abs_top_srcdir)"'
tests_fuzz_fuzz_corefile_LDFLAGS = $(FUZZ_LINK)
tests_fuzz_fuzz_corefile_LDADD = $(LIBCOREFILE) $(LIBCOMMON) $(DEP_LIBS)

# a query through kubernetes + topology over the fixture store
tests_fuzz_fuzz_kube_SOURCES = tests/fuzz/fuzz_kube.c tests/fuzz/fixture.c tests/fuzz/fixture.h \
	tests/fuzz/replay.c src/plugins.c
tests_fuzz_fuzz_kube_CFLAGS = $(FUZZ_CC_FLAGS) -DSRCDIR='"$(abs_top_srcdir)"'
tests_fuzz_fuzz_kube_LDFLAGS = $(FUZZ_LINK)
tests_fuzz_fuzz_kube_LDADD = $(ALL_LIBS) $(DEP_LIBS)

# the reflector: list/watch state machine and watch-stream framing
tests_fuzz_fuzz_watch_SOURCES = tests/fuzz/fuzz_watch.c tests/fuzz/quiet.h tests/fuzz/rcu_now.h tests/fuzz/replay.c
tests_fuzz_fuzz_watch_CFLAGS = $(FUZZ_CC_FLAGS)
tests_fuzz_fuzz_watch_LDFLAGS = $(FUZZ_LINK)
tests_fuzz_fuzz_watch_LDADD = $(K8S_LIBS) $(DEP_LIBS)

# the selective JSON parser against cJSON (list pages and watch lines)
tests_fuzz_fuzz_jsonsel_SOURCES = tests/fuzz/fuzz_jsonsel.c tests/fuzz/jsonsel_diff.h tests/fuzz/replay.c
tests_fuzz_fuzz_jsonsel_CFLAGS = $(FUZZ_CC_FLAGS)
tests_fuzz_fuzz_jsonsel_LDFLAGS = $(FUZZ_LINK)
tests_fuzz_fuzz_jsonsel_LDADD = $(LIBK8S) $(LIBCOMMON) $(DEP_LIBS)

# kubeconfig files
tests_fuzz_fuzz_kubeconfig_SOURCES = tests/fuzz/fuzz_kubeconfig.c tests/fuzz/scratch.h tests/fuzz/replay.c
tests_fuzz_fuzz_kubeconfig_CFLAGS = $(FUZZ_CC_FLAGS)
tests_fuzz_fuzz_kubeconfig_LDFLAGS = $(FUZZ_LINK)
tests_fuzz_fuzz_kubeconfig_LDADD = $(K8S_LIBS) $(DEP_LIBS)

# zone files: load, lookups, replies, transfer walk
tests_fuzz_fuzz_zone_SOURCES = tests/fuzz/fuzz_zone.c tests/fuzz/replay.c
tests_fuzz_fuzz_zone_CFLAGS = $(FUZZ_CC_FLAGS)
tests_fuzz_fuzz_zone_LDFLAGS = $(FUZZ_LINK)
tests_fuzz_fuzz_zone_LDADD = $(ALL_LIBS) $(DEP_LIBS)

# hosts files through the hosts plugin
tests_fuzz_fuzz_hosts_SOURCES = tests/fuzz/fuzz_hosts.c tests/fuzz/scratch.h tests/fuzz/replay.c src/plugins.c
tests_fuzz_fuzz_hosts_CFLAGS = $(FUZZ_CC_FLAGS)
tests_fuzz_fuzz_hosts_LDFLAGS = $(FUZZ_LINK)
tests_fuzz_fuzz_hosts_LDADD = $(ALL_LIBS) $(DEP_LIBS)

# forward: what is done with an upstream's answer
tests_fuzz_fuzz_forward_SOURCES = tests/fuzz/fuzz_forward.c tests/fuzz/replay.c
tests_fuzz_fuzz_forward_CFLAGS = $(FUZZ_CC_FLAGS)
tests_fuzz_fuzz_forward_LDFLAGS = $(FUZZ_LINK)
tests_fuzz_fuzz_forward_LDADD = $(ALL_LIBS) $(DEP_LIBS)

# DNS-over-TCP framing
tests_fuzz_fuzz_tcp_SOURCES = tests/fuzz/fuzz_tcp.c tests/fuzz/replay.c
tests_fuzz_fuzz_tcp_CFLAGS = $(FUZZ_CC_FLAGS)
tests_fuzz_fuzz_tcp_LDFLAGS = $(FUZZ_LINK)
tests_fuzz_fuzz_tcp_LDADD = $(LIBSERVER) $(LIBRUNTIME) $(LIBCOREFILE) $(LIBCLUSTER) $(LIBWIRE) $(LIBCOMMON) \
	$(DEP_LIBS)

# the HTTP endpoints (health, ready, metrics, explain) behind libevent's parser
tests_fuzz_fuzz_http_SOURCES = tests/fuzz/fuzz_http.c tests/fuzz/fixture.c tests/fuzz/fixture.h \
	tests/fuzz/replay.c src/plugins.c
tests_fuzz_fuzz_http_CFLAGS = $(FUZZ_CC_FLAGS) -DSRCDIR='"$(abs_top_srcdir)"'
tests_fuzz_fuzz_http_LDFLAGS = $(FUZZ_LINK)
tests_fuzz_fuzz_http_LDADD = $(ALL_LIBS) $(DEP_LIBS)

# `make fuzz`: every harness under libFuzzer for FUZZ_SECONDS each (build/fuzz)
FUZZ_SECONDS = 60
fuzz:
	FUZZ_SECONDS=$(FUZZ_SECONDS) bash $(abs_top_srcdir)/scripts/fuzz
.PHONY: fuzz
