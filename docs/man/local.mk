# SPDX-License-Identifier: Apache-2.0
# Manual pages (installed by `make install`): topodns(8) and corefile(5) as
# written, topodns-plugins(7) made from docs/configuration.md (its plugin
# order and directives table), so the page and the document agree. The
# user docs and every plugin's README (as plugins/NAME.md) go to $(docdir).
dist_man_MANS = docs/man/topodns.8 docs/man/corefile.5
man_MANS = docs/man/topodns-plugins.7
CLEANFILES += docs/man/topodns-plugins.7
EXTRA_DIST += docs/man/plugins.sh
docs/man/topodns-plugins.7: $(top_srcdir)/docs/configuration.md $(top_srcdir)/docs/man/plugins.sh
	@$(MKDIR_P) docs/man
	$(AM_V_GEN)$(SHELL) $(top_srcdir)/docs/man/plugins.sh $(top_srcdir)/docs/configuration.md > $@.tmp && mv $@.tmp $@

dist_doc_DATA = README.md docs/configuration.md docs/topology.md docs/compatibility.md \
	docs/architecture.md docs/benchmarks.md docs/operations.md
plugindocdir = $(docdir)/plugins
install-data-local:
	$(MKDIR_P) '$(DESTDIR)$(plugindocdir)'
	for f in $(top_srcdir)/src/plugin/*/README.md; do \
		n=$$(basename "$$(dirname "$$f")"); \
		$(INSTALL_DATA) "$$f" '$(DESTDIR)$(plugindocdir)/'"$$n.md" || exit 1; \
	done
uninstall-local:
	rm -f '$(DESTDIR)$(plugindocdir)'/*.md
	-rmdir '$(DESTDIR)$(plugindocdir)'

# make install into a scratch root: the binary runs, every page renders
# without a warning, the plugin READMEs are there.
TESTS += tests/integration/install.sh tests/integration/docs_agree.sh
EXTRA_DIST += tests/integration/install.sh tests/integration/docs_agree.sh
