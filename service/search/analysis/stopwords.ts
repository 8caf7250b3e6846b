/**
 * English stopwords: the NLTK list (itself close to the Snowball one) without negations' stems
 * that matter in queries (`not`, `no`, `nor` stay out of it). Matched before stemming.
 */
export const ENGLISH_STOPWORDS: ReadonlySet<string> = new Set(
  `a about above after again against all also am an and any are aren't as at be because been before
being below between both but by can can't cannot could couldn't did didn't do does doesn't doing don't
down during each etc few for from further had hadn't has hasn't have haven't having he he'd he'll he's
her here here's hers herself him himself his how how's i i'd i'll i'm i've if in into is isn't it it's
its itself just let's me might more most must mustn't my myself of off on once only or other ought our
ours ourselves out over own same shall shan't she she'd she'll she's should shouldn't so some such than
that that's the their theirs them themselves then there there's these they they'd they'll they're
they've this those through thus to too under until up upon us very via was wasn't we we'd we'll we're
we've were weren't what what's when when's where where's which while who who's whom whose why why's
will with won't would wouldn't yet you you'd you'll you're you've your yours yourself yourselves`
    .split(/\s+/)
    .filter(Boolean),
);
