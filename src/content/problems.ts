/** A content problem, reported with the file and field it concerns so an author can fix it. */
export interface ContentProblem {
  file: string;
  field?: string;
  message: string;
}

export function formatProblem(problem: ContentProblem): string {
  return `${problem.file}${problem.field ? ` [${problem.field}]` : ''}: ${problem.message}`;
}
