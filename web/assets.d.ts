// Style sheets the bundle takes in (esbuild emits them as the page's app.css).
declare module '*.css';
