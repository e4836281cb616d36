/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_corefile.c — unit tests of the Corefile lexer, parser and dispenser
 * (src/corefile): tokens and lines, comments, quotes, BOM/CRLF, keys,
 * braces, environment, snippets, imports of files and globs (in a temporary
 * directory), every parser error, the dispenser walks and error formats, and
 * the duration / number helpers.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "corefile/corefile.h"
#include "corefile/cf_private.h"

static char errbuf[1024];

static cf_file *parse_ok(const char *text)
{
    cf_file *f = cf_parse_string("Corefile", text, errbuf, sizeof errbuf);
    if (!f)
        print_error("unexpected parse error: %s\n", errbuf);
    assert_non_null(f);
    assert_string_equal(errbuf, "");
    return f;
}

static void parse_fails(const char *text, const char *want)
{
    cf_file *f = cf_parse_string("Corefile", text, errbuf, sizeof errbuf);
    if (f)
        cf_free(f);
    assert_null(f);
    assert_string_equal(errbuf, want);
}

static const cf_directive *dir(const cf_file *f, size_t blk, const char *name)
{
    assert_true(blk < f->nblocks);
    const cf_directive *d = cf_block_directive(&f->blocks[blk], name);
    if (!d)
        print_error("no directive %s in block %zu\n", name, blk);
    assert_non_null(d);
    return d;
}

static void tok_is(const cf_token *t, const char *text, int line)
{
    assert_string_equal(t->text, text);
    assert_int_equal(t->line, line);
}

/* ---- temporary files ----------------------------------------------------- */

static char tmpdir[256];

static void write_file(const char *rel, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", tmpdir, rel);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
}

static void make_dir(const char *rel)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", tmpdir, rel);
    assert_int_equal(mkdir(path, 0755), 0);
}

static cf_file *parse_tmp(const char *rel)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", tmpdir, rel);
    return cf_parse_file(path, errbuf, sizeof errbuf);
}

static int setup_tmp(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/cftest.XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown_tmp(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

/* ---- lexer ------------------------------------------------------------- */

static void test_tokens_and_lines(void **state)
{
    (void)state;
    cf_file *f = parse_ok(".:53 {\n  log\n\n  forward .   1.1.1.1\t8.8.8.8\n}\n");
    assert_int_equal(f->nblocks, 1);
    assert_int_equal(f->blocks[0].nkeys, 1);
    tok_is(&f->blocks[0].keys[0], ".:53", 1);
    assert_string_equal(f->blocks[0].keys[0].file, "Corefile");
    assert_int_equal(f->blocks[0].ndirs, 2);
    assert_string_equal(f->blocks[0].dirs[0].name, "log");
    assert_string_equal(f->blocks[0].dirs[1].name, "forward");
    const cf_directive *d = dir(f, 0, "forward");
    assert_int_equal(d->ntokens, 4);
    assert_int_equal(d->noccur, 1);
    tok_is(&d->tokens[0], "forward", 4);
    tok_is(&d->tokens[1], ".", 4);
    tok_is(&d->tokens[2], "1.1.1.1", 4);
    tok_is(&d->tokens[3], "8.8.8.8", 4);
    assert_string_equal(f->path, "Corefile");
    assert_null(cf_block_directive(&f->blocks[0], "nope"));
    assert_null(cf_block_directive(NULL, "log"));
    assert_null(cf_block_directive(&f->blocks[0], NULL));
    cf_free(f);
    cf_free(NULL);
}

static void test_comments(void **state)
{
    (void)state;
    cf_file *f = parse_ok("# head\n. { # open\n  log # trailing\n  abc#def ghi\n"
                          "  # whole line\n  x \"a#b\" #c\n}#end\n");
    const cf_directive *d = dir(f, 0, "abc");
    assert_int_equal(d->ntokens, 1);
    tok_is(&d->tokens[0], "abc", 4);
    d = dir(f, 0, "log");
    assert_int_equal(d->ntokens, 1);
    d = dir(f, 0, "x");
    assert_int_equal(d->ntokens, 2);
    tok_is(&d->tokens[1], "a#b", 6);
    assert_int_equal(f->blocks[0].ndirs, 3);
    cf_free(f);
}

static void test_quotes(void **state)
{
    (void)state;
    cf_file *f = parse_ok(". {\n"
                          "  x \"a b\" \"q\\\"q\" \"b\\s\\\\\" \"\" end\n"
                          "  y \"line1\nline2\" after\n"
                          "  z mid\"dle\"\n}\n");
    const cf_directive *d = dir(f, 0, "x");
    assert_int_equal(d->ntokens, 6);
    tok_is(&d->tokens[1], "a b", 2);
    tok_is(&d->tokens[2], "q\"q", 2);
    tok_is(&d->tokens[3], "b\\s\\\\", 2);
    tok_is(&d->tokens[4], "", 2);
    tok_is(&d->tokens[5], "end", 2);
    d = dir(f, 0, "y");
    assert_int_equal(d->ntokens, 3);
    tok_is(&d->tokens[1], "line1\nline2", 3);
    tok_is(&d->tokens[2], "after", 4);
    /* a quote inside a word is literal; an unterminated quote runs to EOF */
    d = dir(f, 0, "z");
    assert_int_equal(d->ntokens, 2);
    tok_is(&d->tokens[1], "mid\"dle\"", 5);
    cf_free(f);
    f = parse_ok(".\nz \"unterminated\n");
    d = dir(f, 0, "z");
    assert_int_equal(d->ntokens, 2);
    tok_is(&d->tokens[1], "unterminated\n", 2);
    cf_free(f);
    f = parse_ok(".\nz \"");               /* a lone quote at EOF is nothing */
    assert_int_equal(dir(f, 0, "z")->ntokens, 1);
    cf_free(f);
}

static void test_multiline_token_lines(void **state)
{
    (void)state;
    /* after a token spanning lines, the next line is still counted right */
    cf_file *f = parse_ok(". {\n  a \"1\n2\n3\"\n  b\n}\n");
    const cf_directive *d = dir(f, 0, "b");
    tok_is(&d->tokens[0], "b", 5);
    assert_int_equal(dir(f, 0, "a")->ntokens, 2);
    cf_free(f);
}

static void test_bom_crlf_spaces(void **state)
{
    (void)state;
    cf_file *f = parse_ok("\xEF\xBB\xBF.:53 {\r\n  log\r\n  x \"a\r\nb\" ab\rcd\r\n"
                          "  u one\xC2\xA0two\xE3\x80\x80three\r\n}\r\n");
    tok_is(&f->blocks[0].keys[0], ".:53", 1);
    const cf_directive *d = dir(f, 0, "x");
    assert_int_equal(d->ntokens, 3);
    tok_is(&d->tokens[1], "a\nb", 3);
    tok_is(&d->tokens[2], "abcd", 4);
    d = dir(f, 0, "u");
    assert_int_equal(d->ntokens, 4);
    tok_is(&d->tokens[3], "three", 5);
    cf_free(f);
    /* other Unicode spaces separate tokens; a zero-width space does not */
    f = parse_ok(". {\n  s a" "\xE1\x9A\x80" "b" "\xE2\x80\x83" "c" "\xE2\x80\xA8" "d"
                 "\xE2\x81\x9F" "e" "\xC2\x85" "f g" "\xE2\x80\x8B" "h \"x\\\r\ny\"\n}\n");
    d = dir(f, 0, "s");
    assert_int_equal(d->ntokens, 9);
    tok_is(&d->tokens[6], "f", 2);
    tok_is(&d->tokens[7], "g\xE2\x80\x8Bh", 2);
    tok_is(&d->tokens[8], "x\\\ny", 2);
    cf_free(f);
    /* a BOM later in the file is an ordinary token */
    f = parse_ok(". {\n \xEF\xBB\xBFx\n}\n");
    assert_string_equal(f->blocks[0].dirs[0].name, "\xEF\xBB\xBFx");
    cf_free(f);
}

static void test_empty_input(void **state)
{
    (void)state;
    cf_file *f = parse_ok("");
    assert_int_equal(f->nblocks, 0);
    cf_free(f);
    f = parse_ok("  # nothing\n\n");
    assert_int_equal(f->nblocks, 0);
    cf_free(f);
    f = cf_parse_string(NULL, NULL, errbuf, sizeof errbuf);
    assert_non_null(f);
    assert_string_equal(f->path, "Corefile");
    cf_free(f);
    /* only empty tokens: nothing */
    f = parse_ok("\"\"\n");
    assert_int_equal(f->nblocks, 0);
    cf_free(f);
}

/* ---- keys and blocks --------------------------------------------------- */

static void test_keys(void **state)
{
    (void)state;
    cf_file *f = parse_ok(". example.org:1053 {\n}\n"
                          "a.org,\n  b.org, c.org\n{\n  log\n}\n"
                          "x.org,y.org \"\" {\n}\n"
                          "solo.org\n");
    assert_int_equal(f->nblocks, 4);
    assert_int_equal(f->blocks[0].nkeys, 2);
    tok_is(&f->blocks[0].keys[1], "example.org:1053", 1);
    assert_int_equal(f->blocks[0].ndirs, 0);
    assert_int_equal(f->blocks[1].nkeys, 3);
    tok_is(&f->blocks[1].keys[0], "a.org", 3);
    tok_is(&f->blocks[1].keys[1], "b.org", 4);
    tok_is(&f->blocks[1].keys[2], "c.org", 4);
    assert_int_equal(f->blocks[1].ndirs, 1);
    assert_int_equal(f->blocks[2].nkeys, 2);
    tok_is(&f->blocks[2].keys[0], "x.org", 8);
    tok_is(&f->blocks[2].keys[1], "y.org", 8);
    /* keys alone at the end of the file form a block without directives */
    assert_int_equal(f->blocks[3].nkeys, 1);
    assert_int_equal(f->blocks[3].ndirs, 0);
    cf_free(f);
}

static void test_no_braces(void **state)
{
    (void)state;
    cf_file *f = parse_ok(".:53\nlog\nforward . 1.1.1.1 {\n  except a\n}\nwhoami\n");
    assert_int_equal(f->nblocks, 1);
    assert_int_equal(f->blocks[0].ndirs, 3);
    assert_int_equal(dir(f, 0, "forward")->ntokens, 7);
    cf_free(f);
}

static void test_key_errors(void **state)
{
    (void)state;
    parse_fails("a.org,", "Corefile:1: unexpected EOF: expected another key after ',' near 'a.org,'");
    parse_fails("a.org,\n\n", "Corefile:1: unexpected EOF: expected another key after ',' near 'a.org,'");
    parse_fails("a.org, {\n}\n",
                "Corefile:1: Expected another key but had '{' - check for extra comma near '{'");
    parse_fails("{\n log\n}\n", "Corefile:1: Expected server block keys before '{' near '{'");
    parse_fails("\"\" {\n}\n", "Corefile:1: Expected server block keys before '{' near '{'");
}

static void test_repeated_and_order(void **state)
{
    (void)state;
    cf_file *f = parse_ok(". {\n  log\n  cache 30\n  log {\n    class all\n  }\n}\n");
    assert_int_equal(f->blocks[0].ndirs, 2);
    assert_string_equal(f->blocks[0].dirs[0].name, "log");
    const cf_directive *d = dir(f, 0, "log");
    assert_int_equal(d->noccur, 2);
    assert_int_equal(d->ntokens, 6);
    tok_is(&d->tokens[0], "log", 2);
    tok_is(&d->tokens[1], "log", 4);
    tok_is(&d->tokens[2], "{", 4);
    tok_is(&d->tokens[5], "}", 6);
    cf_free(f);
}

static void test_nested_blocks(void **state)
{
    (void)state;
    cf_file *f = parse_ok(". {\n  kubernetes cluster.local {\n    pods insecure\n    sub {\n"
                          "      deep 1\n    }\n    ttl 30\n  }\n  log\n}\n"
                          "b.org {\n  k { a }\n}\n");
    const cf_directive *d = dir(f, 0, "kubernetes");
    assert_int_equal(d->ntokens, 13);
    tok_is(&d->tokens[12], "}", 8);
    assert_int_equal(f->blocks[0].ndirs, 2);
    assert_int_equal(dir(f, 1, "k")->ntokens, 4);
    cf_free(f);
}

static void test_brace_errors(void **state)
{
    (void)state;
    parse_fails("}\n", "Corefile:1: Unexpected '}' because no matching opening brace near '}'");
    parse_fails(". {\n}\n}\n", "Corefile:3: Unexpected '}' because no matching opening brace near '}'");
    parse_fails(". {\n  log }\n}\n",
                "Corefile:2: Unexpected '}' because no matching opening brace near '}'");
    parse_fails(". { whoami }\n",
                "Corefile:1: Unexpected '}' because no matching opening brace near '}'");
    parse_fails(".\nlog\n}\n", "Corefile:3: Unexpected '}' because no matching opening brace near '}'");
    parse_fails("a }\n", "Corefile:1: Unexpected '}' because no matching opening brace near '}'");
    parse_fails(". {\n  log\n", "Corefile:1: unexpected EOF: unclosed block near '{'");
    /* as CoreDNS: a file ending with the '}' of the last directive's block
     * may leave out the server block's own '}' */
    cf_file *f = parse_ok(". {\n  log\n  k {\n    x\n  }\n");
    assert_int_equal(f->nblocks, 1);
    assert_int_equal(f->blocks[0].ndirs, 2);
    assert_int_equal(dir(f, 0, "k")->ntokens, 4);
    cf_free(f);
    parse_fails(". {\n  k {\n    x\n  }\n  log\n", "Corefile:1: unexpected EOF: unclosed block near '{'");
    parse_fails(".\nk {\n  s {\n  x\n}\n", "Corefile:2: unexpected EOF: unclosed block near '{'");
    parse_fails(". {\n  log\n  {\n  }\n}\n",
                "Corefile:3: Unexpected '{' at the start of a line: a block must open on the same "
                "line as its directive near '{'");
    parse_fails(". {\n  {\n  }\n}\n",
                "Corefile:2: Unexpected '{' at the start of a line: a block must open on the same "
                "line as its directive near '{'");
    parse_fails(". {\n  k {\n    {\n    }\n  }\n}\n",
                "Corefile:3: Unexpected '{' at the start of a line: a block must open on the same "
                "line as its directive near '{'");
    parse_fails(". {\n  k\n  {\n  }\n}\n",
                "Corefile:3: Unexpected '{' at the start of a line: a block must open on the same "
                "line as its directive near '{'");
}

/* ---- environment ------------------------------------------------------- */

static void test_env(void **state)
{
    (void)state;
    setenv("CF_A", "aa", 1);
    setenv("CF_B", "bb", 1);
    setenv("CF_PORT", "1053", 1);
    setenv("CF_DIR", "log", 1);
    setenv("CF_SELF", "{$CF_A}", 1);
    unsetenv("CF_UNSET");
    cf_file *f = parse_ok("{$CF_A}.org:{%CF_PORT%} {$CF_UNSET}{%CF_UNSET%}x.org {\n"
                          "  {$CF_DIR} x{$CF_A}y{%CF_B%}z{$CF_A} {$CF_UNSET}end {$} {%%} {$CF_A\n"
                          "  v {$CF_SELF} \"{$CF_B} q\"\n"
                          "}\n");
    assert_int_equal(f->blocks[0].nkeys, 2);
    tok_is(&f->blocks[0].keys[0], "aa.org:1053", 1);
    tok_is(&f->blocks[0].keys[1], "x.org", 1);
    const cf_directive *d = dir(f, 0, "log");
    assert_int_equal(d->ntokens, 6);
    tok_is(&d->tokens[0], "log", 2);
    tok_is(&d->tokens[1], "xaaybbzaa", 2);
    tok_is(&d->tokens[2], "end", 2);
    tok_is(&d->tokens[3], "{$}", 2);
    tok_is(&d->tokens[4], "{%%}", 2);
    tok_is(&d->tokens[5], "{$CF_A", 2);
    d = dir(f, 0, "v");
    /* values are not expanded again; quoted tokens expand too */
    tok_is(&d->tokens[1], "{$CF_A}", 3);
    tok_is(&d->tokens[2], "bb q", 3);
    cf_free(f);
    /* a directive name that expands to nothing is still a directive "" */
    f = parse_ok(". {\n  {$CF_UNSET} a\n}\n");
    assert_non_null(cf_block_directive(&f->blocks[0], ""));
    cf_free(f);
}

/* ---- snippets ---------------------------------------------------------- */

static void test_snippets(void **state)
{
    (void)state;
    cf_file *f = parse_ok("(common) {\n  log\n  errors\n}\n"
                          ". {\n  import common\n  whoami\n}\n"
                          "example.org {\n  import common\n  import common\n}\n"
                          "(props) {\n  pods insecure\n}\n"
                          "c.org {\n  kubernetes {\n    import props\n    ttl 5\n  }\n}\n"
                          "(srv) {\nd.org {\n  whoami\n}\n}\nimport srv\n");
    assert_int_equal(f->nblocks, 4);
    assert_int_equal(f->blocks[0].ndirs, 3);
    tok_is(&dir(f, 0, "log")->tokens[0], "log", 2);
    tok_is(&dir(f, 0, "whoami")->tokens[0], "whoami", 7);
    const cf_directive *d = dir(f, 1, "log");
    assert_int_equal(d->noccur, 2);
    assert_int_equal(d->ntokens, 2);
    /* two expansions of one snippet are two lines, not one */
    cf_disp ds;
    cf_disp_init(&ds, d);
    assert_true(cf_next(&ds));
    assert_false(cf_next_arg(&ds));
    assert_true(cf_next(&ds));
    assert_false(cf_next(&ds));
    d = dir(f, 2, "kubernetes");
    assert_int_equal(d->ntokens, 7);
    tok_is(&d->tokens[2], "pods", 14);
    tok_is(&d->tokens[4], "ttl", 19);
    tok_is(&f->blocks[3].keys[0], "d.org", 23);
    cf_free(f);
}

static void test_snippet_errors(void **state)
{
    (void)state;
    parse_fails("(a) {\n x\n}\n(a) {\n y\n}\n",
                "Corefile:4: redeclaration of previously declared snippet 'a' near '(a)'");
    parse_fails("(a) {\n log\n import a\n}\n", "Corefile:1: snippet 'a' imports itself near '{'");
    parse_fails("(a)\n", "Corefile:1: Expected '{' to open snippet 'a' near '(a)'");
    parse_fails("(a)\nlog\n", "Corefile:2: Expected '{' to open snippet 'a' near 'log'");
    parse_fails("(a) {\n log\n", "Corefile:1: unexpected EOF: unclosed block near '{'");
    parse_fails("(a) {\n k {\n}\n", "Corefile:1: unexpected EOF: unclosed block near '{'");
    /* mutual recursion runs into the expansion cap */
    cf_file *f = cf_parse_string("Corefile", "(a) {\n import b\n}\n(b) {\n import a\n}\n"
                                 ". {\n import a\n}\n", errbuf, sizeof errbuf);
    assert_null(f);
    assert_non_null(strstr(errbuf, "maximum snippet import depth (10000) exceeded near '"));
    assert_true(strncmp(errbuf, "Corefile:2: ", 12) == 0 || strncmp(errbuf, "Corefile:5: ", 12) == 0);
}

static void test_import_args(void **state)
{
    (void)state;
    const char *msg = "Import takes exactly one argument (a snippet name, file or glob pattern)";
    char want[256];
    snprintf(want, sizeof want, "Corefile:1: %s near 'import'", msg);
    parse_fails("import\n. {\n}\n", want);
    snprintf(want, sizeof want, "Corefile:1: %s near 'b'", msg);
    parse_fails("import a b\n", want);
    snprintf(want, sizeof want, "Corefile:2: %s near 'import'", msg);
    parse_fails(". {\n  import\n}\n", want);
    snprintf(want, sizeof want, "Corefile:3: %s near 'y'", msg);
    parse_fails(". {\n  k {\n    import x y\n  }\n}\n", want);
    parse_fails(". {\n  import \"\"\n}\n", "Corefile:2: Import requires a non-empty filepath near ''");
    unsetenv("CF_UNSET");
    parse_fails("import {$CF_UNSET}\n",
                "Corefile:1: Import requires a non-empty filepath near '{$CF_UNSET}'");
    /* `import` not at the start of a line is an ordinary word */
    cf_file *f = parse_ok(". {\n  foo import bar\n}\n");
    assert_int_equal(dir(f, 0, "foo")->ntokens, 3);
    cf_free(f);
}

/* ---- file imports ------------------------------------------------------ */

static void test_import_files(void **state)
{
    (void)state;
    make_dir("t1");
    make_dir("t1/sub");
    write_file("t1/Corefile", "import sub/*.server\n. {\n  import extra.conf\n  log\n}\n");
    write_file("t1/sub/a.server", "a.org {\n  whoami\n}\n");
    write_file("t1/sub/b.server", "# b\nb.org {\n  import ../extra.conf\n}\n");
    write_file("t1/extra.conf", "errors\nforward . 1.1.1.1\n");
    cf_file *f = parse_tmp("t1/Corefile");
    if (!f)
        print_error("%s\n", errbuf);
    assert_non_null(f);
    assert_int_equal(f->nblocks, 3);
    char want[512];
    snprintf(want, sizeof want, "%s/t1/sub/a.server", tmpdir);
    tok_is(&f->blocks[0].keys[0], "a.org", 1);
    assert_string_equal(f->blocks[0].keys[0].file, want);
    const cf_directive *d = dir(f, 0, "whoami");
    assert_string_equal(d->tokens[0].file, want);
    tok_is(&d->tokens[0], "whoami", 2);
    tok_is(&f->blocks[1].keys[0], "b.org", 2);
    d = dir(f, 1, "forward");
    snprintf(want, sizeof want, "%s/t1/extra.conf", tmpdir);
    assert_string_equal(d->tokens[0].file, want);
    tok_is(&d->tokens[0], "forward", 2);
    assert_int_equal(f->blocks[2].ndirs, 3);
    d = dir(f, 2, "log");
    snprintf(want, sizeof want, "%s/t1/Corefile", tmpdir);
    assert_string_equal(d->tokens[0].file, want);
    tok_is(&d->tokens[0], "log", 4);
    cf_free(f);

    /* absolute path, via the environment */
    char abs[512];
    snprintf(abs, sizeof abs, "%s/t1/extra.conf", tmpdir);
    setenv("CF_IMPORT", abs, 1);
    f = parse_ok(". {\n  import {$CF_IMPORT}\n}\n");
    assert_int_equal(f->blocks[0].ndirs, 2);
    cf_free(f);
}

static void test_import_relative(void **state)
{
    (void)state;
    char want[512], cwd[512], name[512];
    make_dir("t9");
    write_file("t9/x.conf", "log\n");
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(tmpdir), 0);
    /* relative to the current directory when the Corefile has no directory */
    cf_file *f = parse_ok(". {\n  import t9/./x.conf\n}\n");
    snprintf(want, sizeof want, "%s/t9/x.conf", tmpdir);
    assert_string_equal(dir(f, 0, "log")->tokens[0].file, want);
    cf_free(f);
    /* a relative Corefile path */
    write_file("t9/Corefile", ". {\n  import x.conf\n}\n");
    f = cf_parse_file("t9/Corefile", errbuf, sizeof errbuf);
    assert_non_null(f);
    assert_string_equal(dir(f, 0, "log")->tokens[0].file, want);
    assert_string_equal(f->blocks[0].keys[0].file, "t9/Corefile");
    cf_free(f);
    assert_int_equal(chdir(cwd), 0);
    /* a Corefile in the root directory */
    snprintf(name, sizeof name, ". {\n  import %s/t9/x.conf\n}\n", tmpdir + 1);
    f = cf_parse_string("/Corefile", name, errbuf, sizeof errbuf);
    assert_non_null(f);
    assert_string_equal(dir(f, 0, "log")->tokens[0].file, want);
    cf_free(f);
}

static void test_snippet_across_files(void **state)
{
    (void)state;
    char want[512];
    make_dir("t10");
    write_file("t10/part.conf", "(s) {\n  log\n");
    write_file("t10/Corefile", "import part.conf\n  errors\n}\n. {\n  import s\n}\n");
    cf_file *f = parse_tmp("t10/Corefile");
    assert_non_null(f);
    assert_int_equal(f->nblocks, 1);
    assert_int_equal(f->blocks[0].ndirs, 2);
    snprintf(want, sizeof want, "%s/t10/part.conf", tmpdir);
    assert_string_equal(dir(f, 0, "log")->tokens[0].file, want);
    tok_is(&dir(f, 0, "log")->tokens[0], "log", 2);
    snprintf(want, sizeof want, "%s/t10/Corefile", tmpdir);
    assert_string_equal(dir(f, 0, "errors")->tokens[0].file, want);
    tok_is(&dir(f, 0, "errors")->tokens[0], "errors", 2);
    cf_free(f);
}

static void test_import_empty_glob(void **state)
{
    (void)state;
    make_dir("t2");
    write_file("t2/Corefile", "import none/*.server\n. {\n  import x*.none\n  whoami\n}\n"
                              "import nothing?.conf\n");
    cf_file *f = parse_tmp("t2/Corefile");
    assert_non_null(f);
    assert_int_equal(f->nblocks, 1);
    assert_int_equal(f->blocks[0].ndirs, 1);
    cf_free(f);
}

static void test_import_errors(void **state)
{
    (void)state;
    char want[2048];
    make_dir("t3");
    make_dir("t3/dir");
    write_file("t3/missing", ". {\n  import nothere.conf\n}\n");
    assert_null(parse_tmp("t3/missing"));
    snprintf(want, sizeof want, "%s/t3/missing:2: File to import not found: nothere.conf near "
             "'nothere.conf'", tmpdir);
    assert_string_equal(errbuf, want);

    write_file("t3/bad1", "import [ab].conf\n");
    assert_null(parse_tmp("t3/bad1"));
    snprintf(want, sizeof want, "%s/t3/bad1:1: Glob pattern may only contain one wildcard (*), "
             "but has others: [ab].conf near '[ab].conf'", tmpdir);
    assert_string_equal(errbuf, want);
    write_file("t3/bad2", ". {\n  import */*.conf\n}\n");
    assert_null(parse_tmp("t3/bad2"));
    assert_non_null(strstr(errbuf, ":2: Glob pattern may only contain one wildcard"));
    write_file("t3/bad3", "import a??\n");
    assert_null(parse_tmp("t3/bad3"));
    assert_non_null(strstr(errbuf, ":1: Glob pattern may only contain one wildcard"));

    write_file("t3/isdir", "import dir\n");
    assert_null(parse_tmp("t3/isdir"));
    snprintf(want, sizeof want, "%s/t3/isdir:1: Could not import %s/t3/dir: is a directory "
             "near 'dir'", tmpdir, tmpdir);
    assert_string_equal(errbuf, want);

    char target[512], link[512];
    snprintf(target, sizeof target, "%s/t3/gone", tmpdir);
    snprintf(link, sizeof link, "%s/t3/dangling.conf", tmpdir);
    assert_int_equal(symlink(target, link), 0);
    write_file("t3/dangle", "import dangling.conf\n");
    assert_null(parse_tmp("t3/dangle"));
    snprintf(want, sizeof want, "%s/t3/dangle:1: Could not import %s/t3/dangling.conf: No such "
             "file or directory near 'dangling.conf'", tmpdir, tmpdir);
    assert_string_equal(errbuf, want);

    /* an error inside an imported file names that file */
    write_file("t3/broken.conf", "log\n}\n");
    write_file("t3/imp", ". {\n  import broken.conf\n}\n");
    assert_null(parse_tmp("t3/imp"));
    /* the imported '}' closes the block, the file's own '}' is then unmatched */
    snprintf(want, sizeof want, "%s/t3/imp:3: Unexpected '}' because no matching opening brace "
             "near '}'", tmpdir);
    assert_string_equal(errbuf, want);

    /* read errors: a directory as the Corefile, /proc/self/mem as an import */
    assert_null(cf_parse_file(tmpdir, errbuf, sizeof errbuf));
    snprintf(want, sizeof want, "%s: Is a directory", tmpdir);
    assert_string_equal(errbuf, want);
    if (access("/proc/self/mem", R_OK) == 0) {
        parse_fails("import /proc/self/mem\n",
                    "Corefile:1: Could not import /proc/self/mem: Input/output error near "
                    "'/proc/self/mem'");
    }

    /* a device would never end: refused, never read */
    parse_fails("import /dev/zero\n",
                "Corefile:1: Could not import /dev/zero: not a regular file near '/dev/zero'");

    /* a FIFO would block: only regular files are read */
    char fifo[512];
    snprintf(fifo, sizeof fifo, "%s/t3/pipe.conf", tmpdir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    write_file("t3/fifo", "import pipe.conf\n");
    assert_null(parse_tmp("t3/fifo"));
    snprintf(want, sizeof want, "%s/t3/fifo:1: Could not import %s: not a regular file near "
             "'pipe.conf'", tmpdir, fifo);
    assert_string_equal(errbuf, want);

    /* a file that cannot be opened (mode 000, or a write-only sysctl as root) */
    char locked[512], text[600];
    snprintf(locked, sizeof locked, "%s/t3/locked.conf", tmpdir);
    write_file("t3/locked.conf", "log\n");
    chmod(locked, 0);
    FILE *probe = fopen(locked, "r");
    if (probe) {
        fclose(probe);
        snprintf(locked, sizeof locked, "/proc/sys/vm/drop_caches");
        probe = fopen(locked, "r");
    }
    if (!probe) {
        snprintf(text, sizeof text, "import %s\n", locked);
        snprintf(want, sizeof want, "Corefile:1: Could not import %s: Permission denied near '%s'",
                 locked, locked);
        parse_fails(text, want);
    } else {
        fclose(probe);
        print_message("skipped: no unreadable file available\n");
    }

    assert_null(cf_parse_file("/nonexistent/dir/Corefile", errbuf, sizeof errbuf));
    assert_string_equal(errbuf, "/nonexistent/dir/Corefile: No such file or directory");
}

static void test_import_cycles(void **state)
{
    (void)state;
    char want[1024];
    make_dir("t4");
    write_file("t4/Corefile", ". {\n  import a.conf\n}\n");
    write_file("t4/a.conf", "log\nimport b.conf\n");
    write_file("t4/b.conf", "import a.conf\n");
    assert_null(parse_tmp("t4/Corefile"));
    snprintf(want, sizeof want, "%s/t4/b.conf:1: Import cycle: %s/t4/a.conf imports itself near "
             "'a.conf'", tmpdir, tmpdir);
    assert_string_equal(errbuf, want);

    /* a glob matching the importing file itself */
    make_dir("t5");
    write_file("t5/Corefile", "import *\n");
    assert_null(parse_tmp("t5/Corefile"));
    assert_non_null(strstr(errbuf, "Import cycle: "));
    assert_non_null(strstr(errbuf, "/t5/Corefile imports itself near '*'"));

    /* the same file twice, not nested, is fine */
    make_dir("t6");
    write_file("t6/Corefile", ". {\n  import c.conf\n}\nb. {\n  import c.conf\n  import c.conf\n}\n");
    write_file("t6/c.conf", "log\n");
    cf_file *f = parse_tmp("t6/Corefile");
    assert_non_null(f);
    assert_int_equal(dir(f, 1, "log")->noccur, 2);
    cf_free(f);
}

static void test_import_caps(void **state)
{
    (void)state;
    make_dir("t7");
    write_file("t7/e.conf", "");
    write_file("t7/Corefile", "import e.conf\nimport e.conf\nimport e.conf\n");
    cf_limits lim = cf_default_limits;
    lim.max_file_imports = 2;
    char path[512];
    snprintf(path, sizeof path, "%s/t7/Corefile", tmpdir);
    assert_null(cf_parse_file_limited(path, &lim, errbuf, sizeof errbuf));
    assert_non_null(strstr(errbuf, "/t7/Corefile:3: maximum file import depth (2) exceeded "
                                   "near 'e.conf'"));
    lim.max_file_imports = 3;                /* three imports are within a cap of 3 */
    cf_file *ok = cf_parse_file_limited(path, &lim, errbuf, sizeof errbuf);
    assert_non_null(ok);
    cf_free(ok);
    lim = cf_default_limits;
    lim.max_tokens = 20;
    assert_null(cf_parse_string_limited("Corefile",
                                        "(s) {\n a b c d e f\n}\n. {\n import s\n import s\n}\n",
                                        &lim, errbuf, sizeof errbuf));
    assert_string_equal(errbuf, "Corefile:6: too many tokens after imports (limit 20) near 's'");
    /* the Corefile itself */
    assert_null(cf_parse_string_limited("Corefile", ". {\n a b c d e f g h i j\n k l m n o p\n"
                                        " q r s t u v\n}\n", &lim, errbuf, sizeof errbuf));
    assert_string_equal(errbuf, "Corefile:4: too many tokens (limit 20) near 's'");
    /* a glob's files: reading stops at the file that goes over the limit;
     * t8/b.conf, a directory the glob matches after a.conf, is not reached */
    make_dir("t11");
    make_dir("t11/b.conf");
    write_file("t11/a.conf", "log\nlog\nlog\nlog\nlog\nlog\nlog\nlog\nlog\nlog\n"
                            "log\nlog\nlog\nlog\nlog\nlog\nlog\nlog\nlog\nlog\nlog\n");
    write_file("t11/Corefile", ". {\n import *.conf\n}\n");
    snprintf(path, sizeof path, "%s/t11/Corefile", tmpdir);
    assert_null(cf_parse_file_limited(path, &lim, errbuf, sizeof errbuf));
    assert_non_null(strstr(errbuf, "/t11/Corefile:2: too many tokens after imports (limit 20) "
                                   "near '*.conf'"));
    lim.max_tokens = 40;                     /* within the limit: b.conf is reached */
    assert_null(cf_parse_file_limited(path, &lim, errbuf, sizeof errbuf));
    assert_non_null(strstr(errbuf, "b.conf: is a directory"));
}

/* ---- dispenser --------------------------------------------------------- */

static void test_disp_walk(void **state)
{
    (void)state;
    cf_file *f = parse_ok(". {\n  forward . 1.1.1.1 8.8.8.8 {\n    except a.org b.org\n"
                          "    max_fails 3\n    unread x y\n  }\n  forward other. 9.9.9.9\n}\n");
    cf_disp d;
    cf_disp_init(&d, dir(f, 0, "forward"));
    assert_string_equal(cf_val(&d), "");
    assert_int_equal(cf_line(&d), 0);
    assert_string_equal(cf_file_name(&d), "Corefile");
    assert_false(cf_next_block(&d));         /* no '{' next: nothing moves */
    assert_int_equal(d.cur, -1);
    assert_true(cf_next(&d));
    assert_string_equal(cf_val(&d), "forward");
    assert_int_equal(cf_line(&d), 2);
    const char *args[2];
    assert_int_equal(cf_remaining_args(&d, args, 2), 3);
    assert_string_equal(args[0], ".");
    assert_string_equal(args[1], "1.1.1.1");
    assert_string_equal(cf_val(&d), "8.8.8.8");
    assert_false(cf_next_arg(&d));           /* '{' is not an argument */
    assert_true(cf_next_block(&d));
    assert_string_equal(cf_val(&d), "except");
    assert_int_equal(cf_line(&d), 3);
    assert_true(cf_next_arg(&d));
    assert_string_equal(cf_val(&d), "a.org");
    assert_true(cf_next_block(&d));          /* skips the unread b.org */
    assert_string_equal(cf_val(&d), "max_fails");
    assert_true(cf_next_block(&d));
    assert_string_equal(cf_val(&d), "unread");
    assert_false(cf_next_block(&d));
    assert_string_equal(cf_val(&d), "}");
    assert_int_equal(d.nesting, 0);
    assert_false(cf_next_block(&d));         /* no block any more */
    assert_true(cf_next(&d));
    assert_string_equal(cf_val(&d), "forward");
    assert_int_equal(cf_line(&d), 7);
    assert_false(cf_next_block(&d));         /* next token is not '{' */
    assert_string_equal(cf_val(&d), "forward");
    assert_int_equal(cf_remaining_args(&d, NULL, 0), 2);
    assert_false(cf_next_arg(&d));
    assert_false(cf_next_block(&d));
    assert_false(cf_next(&d));
    cf_free(f);
}

static void test_disp_nested(void **state)
{
    (void)state;
    cf_file *f = parse_ok(". {\n  k zone {\n    a 1\n    sub x {\n      deep 1\n      deeper {\n"
                          "        z\n      }\n    }\n    skipped {\n      q\n    }\n    last\n  }\n"
                          "  k { inline }\n  k {\n  }\n}\n");
    cf_disp d;
    cf_disp_init(&d, dir(f, 0, "k"));
    assert_true(cf_next(&d));
    assert_true(cf_next_arg(&d));
    assert_true(cf_next_block(&d));
    assert_string_equal(cf_val(&d), "a");
    assert_true(cf_next_block(&d));
    assert_string_equal(cf_val(&d), "sub");
    assert_true(cf_next_arg(&d));
    assert_string_equal(cf_val(&d), "x");
    assert_true(cf_next_block(&d));          /* enters sub's block */
    assert_int_equal(d.nesting, 2);
    assert_string_equal(cf_val(&d), "deep");
    assert_true(cf_next_block(&d));          /* skips "1" */
    assert_string_equal(cf_val(&d), "deeper");
    assert_true(cf_next_block(&d));          /* enters deeper */
    assert_string_equal(cf_val(&d), "z");
    assert_int_equal(d.nesting, 3);
    assert_false(cf_next_block(&d));
    assert_int_equal(d.nesting, 2);
    assert_false(cf_next_block(&d));         /* sub's closing brace */
    assert_int_equal(d.nesting, 1);
    assert_true(cf_next_block(&d));
    assert_string_equal(cf_val(&d), "skipped");
    assert_int_equal(cf_remaining_args(&d, NULL, 0), 0);
    assert_false(cf_next_arg(&d));
    assert_true(cf_next_block(&d));          /* '{' follows: enters it */
    assert_string_equal(cf_val(&d), "q");
    assert_false(cf_next_block(&d));
    assert_true(cf_next_block(&d));
    assert_string_equal(cf_val(&d), "last");
    assert_false(cf_next_block(&d));
    assert_int_equal(d.nesting, 0);
    /* one-line block */
    assert_true(cf_next(&d));
    assert_true(cf_next_block(&d));
    assert_string_equal(cf_val(&d), "inline");
    assert_false(cf_next_arg(&d));           /* '}' is not an argument */
    assert_false(cf_next_block(&d));
    assert_string_equal(cf_val(&d), "}");
    /* empty block */
    assert_true(cf_next(&d));
    assert_false(cf_next_block(&d));
    assert_string_equal(cf_val(&d), "}");
    assert_int_equal(d.nesting, 0);
    assert_false(cf_next(&d));
    cf_free(f);
}

static void test_disp_skip_unentered(void **state)
{
    (void)state;
    /* a property with unread arguments and a block is skipped whole */
    cf_file *f = parse_ok(". {\n  k {\n    p a {\n      inner\n    } tail\n    next\n  }\n}\n");
    cf_disp d;
    cf_disp_init(&d, dir(f, 0, "k"));
    assert_true(cf_next(&d));
    assert_true(cf_next_block(&d));
    assert_string_equal(cf_val(&d), "p");
    assert_true(cf_next_block(&d));
    assert_string_equal(cf_val(&d), "next");
    assert_int_equal(cf_line(&d), 6);
    assert_false(cf_next_block(&d));
    assert_false(cf_next(&d));
    cf_free(f);
}

static void test_disp_first_and_multiline(void **state)
{
    (void)state;
    cf_file *f = parse_ok(". {\n  tls \"a\nb\" c\n  d\n}\n");
    cf_disp d;
    cf_disp_init(&d, dir(f, 0, "tls"));
    assert_true(cf_next_arg(&d));            /* first call: the first token */
    assert_string_equal(cf_val(&d), "tls");
    assert_true(cf_next_arg(&d));
    assert_string_equal(cf_val(&d), "a\nb");
    assert_true(cf_next_arg(&d));
    assert_string_equal(cf_val(&d), "c");
    assert_int_equal(cf_line(&d), 3);
    assert_false(cf_next_arg(&d));
    cf_free(f);

    cf_disp_init(&d, NULL);
    assert_false(cf_next(&d));
    assert_false(cf_next_arg(&d));
    assert_false(cf_next_block(&d));
    assert_string_equal(cf_file_name(&d), "");
    assert_int_equal(cf_err(&d, "empty"), -1);
    assert_string_equal(d.err, ":0: empty near ''");

    /* hand-made tokens with a block that never closes */
    cf_token toks[3] = { { "x", "F", 1 }, { "{", "F", 1 }, { "y", "F", 2 } };
    cf_directive hd = { "x", toks, 3, 1 };
    cf_disp_init(&d, &hd);
    assert_true(cf_next(&d));
    assert_true(cf_next_block(&d));
    assert_string_equal(cf_val(&d), "y");
    assert_false(cf_next_block(&d));
    assert_int_equal(d.nesting, 0);
    cf_token toks3[6] = { { "x", "F", 1 }, { "{", "F", 1 }, { "a", "F", 2 },
                          { "b", "F", 2 }, { "{", "F", 2 }, { "c", "F", 3 } };
    cf_directive hd3 = { "x", toks3, 6, 1 };
    cf_disp_init(&d, &hd3);
    assert_true(cf_next(&d));
    assert_true(cf_next_block(&d));
    assert_string_equal(cf_val(&d), "a");
    assert_false(cf_next_block(&d));         /* unmatched inner '{' */
    assert_int_equal(d.nesting, 0);
    cf_token toks2[2] = { { "x", "F", 1 }, { "{", "F", 1 } };
    cf_directive hd2 = { "x", toks2, 2, 1 };
    cf_disp_init(&d, &hd2);
    assert_true(cf_next(&d));
    assert_false(cf_next_block(&d));
}

static void test_disp_errors(void **state)
{
    (void)state;
    cf_file *f = parse_ok(". {\n  health :8080 {\n    lameduck 5s\n    foo\n  }\n}\n");
    cf_disp d;
    cf_disp_init(&d, dir(f, 0, "health"));
    assert_int_equal(cf_err(&d, "before %d", 1), -1);
    assert_string_equal(d.err, "Corefile:2: before 1 near 'health'");
    assert_true(cf_next(&d));
    assert_true(cf_next_arg(&d));
    assert_int_equal(cf_err(&d, "bad address %s", cf_val(&d)), -1);
    assert_string_equal(d.err, "Corefile:2: bad address :8080 near ':8080'");
    assert_int_equal(cf_arg_err(&d), -1);
    assert_string_equal(d.err,
                        "Corefile:2: Wrong argument count or unexpected line ending near ':8080'");
    assert_true(cf_next_block(&d));
    assert_true(cf_next_block(&d));
    assert_string_equal(cf_val(&d), "foo");
    assert_int_equal(cf_prop_err(&d), -1);
    assert_string_equal(d.err, "Corefile:4: unknown property 'foo' near 'foo'");
    /* very long messages are cut, never overflow */
    char big[2000];
    memset(big, 'm', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    assert_int_equal(cf_err(&d, "%s", big), -1);
    assert_int_equal(strlen(d.err), CF_ERR_MAX - 1);
    assert_true(strncmp(d.err, "Corefile:4: mmm", 15) == 0);
    cf_free(f);

    /* errors at imported tokens carry the imported file */
    make_dir("t8");
    write_file("t8/Corefile", ". {\n  import x.conf\n}\n");
    write_file("t8/x.conf", "\n\ncache abc\n");
    f = parse_tmp("t8/Corefile");
    assert_non_null(f);
    cf_disp_init(&d, dir(f, 0, "cache"));
    assert_true(cf_next(&d));
    assert_true(cf_next_arg(&d));
    cf_arg_err(&d);
    char want[512];
    snprintf(want, sizeof want, "%s/t8/x.conf:3: Wrong argument count or unexpected line ending "
             "near 'abc'", tmpdir);
    assert_string_equal(d.err, want);
    cf_free(f);
}

/* ---- values ------------------------------------------------------------ */

static cf_disp vd;
static cf_token vtok = { "val", "Corefile", 7 };
static cf_directive vdir = { "val", &vtok, 1, 1 };

static void dur_ok(const char *s, double want)
{
    double got = -1;
    if (cf_parse_duration(&vd, s, &got) < 0)
        print_error("%s: %s\n", s, vd.err);
    assert_true(got > want - 1e-9 && got < want + 1e-9);
}

static void dur_bad(const char *s, const char *msg)
{
    double got = 42;
    char want[256];
    assert_int_equal(cf_parse_duration(&vd, s, &got), -1);
    assert_true(got == 42);
    snprintf(want, sizeof want, "Corefile:7: %s near 'val'", msg);
    assert_string_equal(vd.err, want);
}

/* The one duration parser: Go's time.ParseDuration, with Go's messages,
 * as CoreDNS's plugins parse their duration options. */
static void test_duration(void **state)
{
    (void)state;
    cf_disp_init(&vd, &vdir);
    cf_next(&vd);
    dur_ok("300ms", 0.3);
    dur_ok("1.5h", 5400);
    dur_ok("1m30s", 90);
    dur_ok("2h45m", 9900);
    dur_ok("0", 0);
    dur_ok("+5s", 5);
    dur_ok(".5s", 0.5);
    dur_ok("1.s", 1);
    dur_ok("1us", 1e-6);
    dur_ok("2\xC2\xB5s", 2e-6);
    dur_ok("3\xCE\xBCs", 3e-6);
    dur_ok("5ns", 5e-9);
    dur_ok("1h1m1s1ms", 3661.001);
    dur_ok("0s", 0);
    dur_bad("10", "time: missing unit in duration \"10\"");   /* as CoreDNS */
    dur_bad("", "time: invalid duration \"\"");
    dur_bad(NULL, "time: invalid duration \"\"");
    dur_bad("+", "time: invalid duration \"+\"");
    dur_bad("-5s", "negative duration '-5s'");
    dur_bad("abc", "time: invalid duration \"abc\"");
    dur_bad(".", "time: invalid duration \".\"");
    dur_bad(".s", "time: invalid duration \".s\"");
    dur_bad("1h-5m", "time: unknown unit \"h-\" in duration \"1h-5m\"");
    dur_bad("1h.", "time: invalid duration \"1h.\"");
    dur_bad("1.5", "time: missing unit in duration \"1.5\"");
    dur_bad("5x", "time: unknown unit \"x\" in duration \"5x\"");
    dur_bad("5sec", "time: unknown unit \"sec\" in duration \"5sec\"");
    dur_bad("99999999999h", "time: invalid duration \"99999999999h\"");
    dur_bad("99999999999999999999", "time: invalid duration \"99999999999999999999\"");
}

static void test_go_duration(void **state)
{
    (void)state;
    int64_t ns;
    char err[128];
    assert_int_equal(cf_go_duration("30s", &ns, err, sizeof err), 0);
    assert_int_equal(ns, 30000000000ll);
    assert_int_equal(cf_go_duration("1m30s", &ns, err, sizeof err), 0);
    assert_int_equal(ns, 90000000000ll);
    assert_int_equal(cf_go_duration("1.5h", &ns, err, sizeof err), 0);
    assert_int_equal(ns, 5400000000000ll);
    assert_int_equal(cf_go_duration("250ms", &ns, err, sizeof err), 0);
    assert_int_equal(ns, 250000000ll);
    assert_int_equal(cf_go_duration("0", &ns, err, sizeof err), 0);
    assert_int_equal(ns, 0);
    assert_int_equal(cf_go_duration("-1s", &ns, err, sizeof err), 0);
    assert_int_equal(ns, -1000000000ll);
    assert_int_equal(cf_go_duration("30", &ns, err, sizeof err), -1);
    assert_string_equal(err, "time: missing unit in duration \"30\"");
    assert_int_equal(cf_go_duration("5x", &ns, err, sizeof err), -1);
    assert_string_equal(err, "time: unknown unit \"x\" in duration \"5x\"");
    assert_int_equal(cf_go_duration("", &ns, err, sizeof err), -1);
    assert_string_equal(err, "time: invalid duration \"\"");
    assert_int_equal(cf_go_duration("s", &ns, err, sizeof err), -1);
    assert_string_equal(err, "time: invalid duration \"s\"");
    assert_int_equal(cf_go_duration("9999999999h", &ns, err, sizeof err), -1);
}

static void test_uint(void **state)
{
    (void)state;
    cf_disp_init(&vd, &vdir);
    cf_next(&vd);
    unsigned long v = 99;
    assert_int_equal(cf_parse_uint(&vd, "0", 0, 10, &v), 0);
    assert_int_equal(v, 0);
    assert_int_equal(cf_parse_uint(&vd, "10", 0, 10, &v), 0);
    assert_int_equal(v, 10);
    assert_int_equal(cf_parse_uint(&vd, "18446744073709551615", 0, (unsigned long)-1, &v), 0);
    assert_true(v == (unsigned long)-1);
    v = 99;
    assert_int_equal(cf_parse_uint(&vd, "11", 0, 10, &v), -1);
    assert_string_equal(vd.err, "Corefile:7: number '11' out of range [0, 10] near 'val'");
    assert_int_equal(cf_parse_uint(&vd, "5", 6, 10, &v), -1);
    assert_string_equal(vd.err, "Corefile:7: number '5' out of range [6, 10] near 'val'");
    assert_int_equal(cf_parse_uint(&vd, "18446744073709551616", 0, (unsigned long)-1, &v), -1);
    assert_non_null(strstr(vd.err, "out of range"));
    assert_int_equal(cf_parse_uint(&vd, "abc", 0, 10, &v), -1);
    assert_string_equal(vd.err, "Corefile:7: invalid number 'abc' near 'val'");
    assert_int_equal(cf_parse_uint(&vd, "", 0, 10, &v), -1);
    assert_string_equal(vd.err, "Corefile:7: invalid number '' near 'val'");
    assert_int_equal(cf_parse_uint(&vd, NULL, 0, 10, &v), -1);
    assert_int_equal(cf_parse_uint(&vd, "-1", 0, 10, &v), -1);
    assert_int_equal(cf_parse_uint(&vd, "+1", 0, 10, &v), -1);
    assert_int_equal(cf_parse_uint(&vd, "1 ", 0, 10, &v), -1);
    assert_int_equal(v, 99);
}

/* Odd inputs must fail or parse, never crash (ASan/valgrind watch). */
static void test_garbage(void **state)
{
    (void)state;
    static const char *inputs[] = {
        "{", "}", "{{{{", "}}}}", "\"", "\"\\", "\\", "a,,,", ",", ", {", "(", "()", "() {\n}\n",
        "import", "a {\n b {\n c {\n", "a {\n b { } } }\n", "\xEF\xBB", "\xEF\xBB\xBF",
        "\xff\xfe\x00", "a\n{\n}\n{\n", "(x) {\n import\n}\n. {\n import x\n}\n",
        "{$", "{%", "{$}", "{%x", ". {\n  import {$\n}\n",
    };
    for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
        cf_file *f = cf_parse_string("Corefile", inputs[i], errbuf, sizeof errbuf);
        if (f) {
            for (size_t b = 0; b < f->nblocks; b++)
                for (size_t k = 0; k < f->blocks[b].ndirs; k++) {
                    cf_disp d;
                    cf_disp_init(&d, &f->blocks[b].dirs[k]);
                    while (cf_next(&d)) {
                        cf_remaining_args(&d, NULL, 0);
                        while (cf_next_block(&d))
                            cf_remaining_args(&d, NULL, 0);
                    }
                }
            cf_free(f);
        } else {
            assert_true(strlen(errbuf) > 0);
        }
    }
    cf_file *f = cf_parse_string("Corefile", "x", NULL, 0);
    cf_free(f);
    assert_null(cf_parse_string("Corefile", "}", NULL, 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tokens_and_lines),
        cmocka_unit_test(test_comments),
        cmocka_unit_test(test_quotes),
        cmocka_unit_test(test_multiline_token_lines),
        cmocka_unit_test(test_bom_crlf_spaces),
        cmocka_unit_test(test_empty_input),
        cmocka_unit_test(test_keys),
        cmocka_unit_test(test_no_braces),
        cmocka_unit_test(test_key_errors),
        cmocka_unit_test(test_repeated_and_order),
        cmocka_unit_test(test_nested_blocks),
        cmocka_unit_test(test_brace_errors),
        cmocka_unit_test(test_env),
        cmocka_unit_test(test_snippets),
        cmocka_unit_test(test_snippet_errors),
        cmocka_unit_test(test_import_args),
        cmocka_unit_test(test_import_files),
        cmocka_unit_test(test_import_relative),
        cmocka_unit_test(test_snippet_across_files),
        cmocka_unit_test(test_import_empty_glob),
        cmocka_unit_test(test_import_errors),
        cmocka_unit_test(test_import_cycles),
        cmocka_unit_test(test_import_caps),
        cmocka_unit_test(test_disp_walk),
        cmocka_unit_test(test_disp_nested),
        cmocka_unit_test(test_disp_skip_unentered),
        cmocka_unit_test(test_disp_first_and_multiline),
        cmocka_unit_test(test_disp_errors),
        cmocka_unit_test(test_duration),
        cmocka_unit_test(test_go_duration),
        cmocka_unit_test(test_uint),
        cmocka_unit_test(test_garbage),
    };
    return cmocka_run_group_tests(tests, setup_tmp, teardown_tmp);
}
