/*
 * The project's guides, served rendered by the service itself (GET /docs/guides/:name, with their
 * screenshots; src/api/docs/guides.routes.ts), so a page links to the guide of the version that runs.
 */
const guide = (name: string) => `/docs/guides/${name}`;

export const GUIDES = {
  widget: guide('widget'),
  sdk: guide('sdk'),
  clickhouseInterface: guide('clickhouse-interface'),
  projectSql: guide('project-sql'),
} as const;
