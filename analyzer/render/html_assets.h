/*
 * html_assets.h - the HTML page's template, CSS and JavaScript, compiled
 * in from analyzer/render/html/ at build time (analyzer/render/html/embed.cmake writes
 * html_assets.c into the build tree; nothing generated is kept in git).
 *
 * NUL-terminated text, read-only, for the program's lifetime. The template
 * holds <!--perfrec:NAME--> markers that analyzer/render/html.c fills in.
 */
#ifndef ANA_HTML_ASSETS_H
#define ANA_HTML_ASSETS_H

extern const char ana_html_page[];   /* analyzer/render/html/page.html */
extern const char ana_html_css[];    /* analyzer/render/html/page.css */
extern const char ana_html_js[];     /* analyzer/render/html/{util,flame,timeline,page}.js */

#endif
