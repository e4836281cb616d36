/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reload.h — how the reload plugin fingerprints a Corefile (for tests).
 *
 * Like CoreDNS, the fingerprint is not a hash of the file's bytes but of its
 * parse: the server blocks serialised the way Go's encoding/json prints
 * caddy's []ServerBlock ({"Keys":[...],"Tokens":{"<directive>":[{"File":..,
 * "Line":..,"Text":..}]}}), then SHA-512. So comment or spacing edits that
 * leave every token on its line do not reload, and an edit in an imported
 * file does.
 */
#ifndef TOPODNS_RELOAD_H
#define TOPODNS_RELOAD_H

#include <stddef.h>
#include "corefile/corefile.h"

/* JSON of the parsed Corefile, malloc'd (NULL when out of memory). */
char *reload_corefile_json(const cf_file *f);

/* Read and parse path, fill out with the hex SHA-512 of its JSON.
 * 0; -1 when the file cannot be read; -2 when it does not parse (message
 * in err). raw (may be NULL) receives the SHA-512 of the file's bytes. */
int reload_corefile_hash(const char *path, char out[129], char raw[129], char *err,
                         size_t errlen);

#endif
