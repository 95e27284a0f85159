/** The interactive API page at /api/swagger: Swagger UI (from the swagger-ui-dist package, served locally) on /swagger.v1.json. */
export const SWAGGER_ASSETS = ["swagger-ui.css", "swagger-ui-bundle.js"] as const;
export type SwaggerAsset = (typeof SWAGGER_ASSETS)[number];

export function swaggerPage(rootUrl: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Gitea API</title>
<link rel="stylesheet" href="${rootUrl}assets/swagger-ui/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="${rootUrl}assets/swagger-ui/swagger-ui-bundle.js"></script>
<script>
window.ui = SwaggerUIBundle({ url: ${JSON.stringify(`${rootUrl}swagger.v1.json`)}, dom_id: "#swagger-ui", deepLinking: true });
</script>
</body>
</html>`;
}
