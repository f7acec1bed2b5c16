/*
 * The project's own guides, shipped with the dashboard's build as files of their own (hashed
 * names under /assets/, served as text), so the pages can link to the version of the guide that
 * matches the running service: the service does not serve the repository's docs/ folder.
 */
import widgetGuide from '../../../docs/widget.md?url';
import sdkGuide from '../../../sdk/README.md?url';

export const GUIDES = { widget: widgetGuide, sdk: sdkGuide } as const;
